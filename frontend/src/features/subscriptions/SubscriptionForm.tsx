import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';

import { ApiError, fieldErrors } from '../../lib/api/client';
import { collectionsQuery } from '../../lib/api/collections/collections';
import { applySubscription } from '../../lib/api/subscriptions/apply';
import { subscriptionKeys } from '../../lib/api/subscriptions/keys';
import { PREVIEW_DAYS, previewQuery } from '../../lib/api/subscriptions/preview';
import { updateSubscription } from '../../lib/api/subscriptions/subscription';
import { createSubscription, MODE_LABELS } from '../../lib/api/subscriptions/subscriptions';
import type {
  ConditionOp,
  DeliveryMode,
  Preview,
  Subscription,
  SubscriptionFilter,
} from '../../lib/api/types';
import { AccessBadge } from '../../components/AccessBadge';
import { Field, invalid } from '../../components/Field';
import { DestinationPicker } from '../../components/destinations/DestinationPicker';
import { formatBBox, formatCount, formatDateTime } from '../../lib/format';
import { LazyBoxMap } from '../../components/map/LazyBoxMap';
import { ShapeUpload } from '../../components/map/ShapeUpload';
import { describeShape, type Geometry } from '../../lib/shapeParam';
import {
  bodyOf,
  boxOf,
  emptyForm,
  filterOf,
  formFromSubscription,
  newConditionRow,
  OP_SYMBOLS,
  type ConditionRow,
  type DayNight,
  type FormState,
} from './filterForm';
import { useDebounced } from '../../lib/useDebounced';
import { SubscriptionSubset } from './SubscriptionSubset';

/** Wait for a pause in typing before asking for a new preview. */
const PREVIEW_DELAY_MS = 400;

type Setter = <K extends keyof FormState>(key: K, value: FormState[K]) => void;

/** Create (no `original`) or edit a subscription, with a live count of what it would match. */
export function SubscriptionForm({
  original,
  initial,
}: {
  original?: Subscription;
  /** A new subscription's starting point, e.g. carried over from a search. */
  initial?: FormState;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<FormState>(() =>
    original ? formFromSubscription(original) : (initial ?? emptyForm()),
  );
  const set: Setter = (key, value) => setForm((old) => ({ ...old, [key]: value }));
  const errorRef = useRef<HTMLDivElement>(null);
  const ids = {
    name: useId(),
    start: useId(),
    end: useId(),
    dayNight: useId(),
    cloud: useId(),
    since: useId(),
  };

  const filter = useMemo(() => filterOf(form, original), [form, original]);
  const settled = useDebounced(filter, PREVIEW_DELAY_MS);

  const save = useMutation({
    mutationFn: async () => {
      const body = bodyOf(form, original);
      const saved = original
        ? await updateSubscription(original.id, body)
        : await createSubscription(body);
      let notice = original ? `Saved “${saved.name}”.` : `Subscription “${saved.name}” created.`;
      let failed = false;
      if (form.applySince) {
        try {
          notice += ` ${(await applySubscription(saved.id, form.since)).detail}`;
        } catch (error) {
          failed = true;
          notice += ` Delivering what is already archived did not start: ${(error as Error).message}`;
        }
      }
      return { saved, notice, failed };
    },
    onSuccess: async ({ saved, notice, failed }) => {
      await queryClient.invalidateQueries({ queryKey: subscriptionKeys.all });
      await navigate(`/subscriptions/${saved.id}`, { state: { notice, failed } });
    },
  });

  useEffect(() => {
    if (save.isError) errorRef.current?.focus();
  }, [save.isError, save.failureCount, save.error]);

  const errors = save.error instanceof ApiError ? fieldErrors(save.error.errors) : {};

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate();
  }

  return (
    <form
      className="sub-form"
      onSubmit={onSubmit}
      noValidate
      aria-describedby={save.isError ? 'sub-form-error' : undefined}
    >
      {save.isError && (
        <div
          className="status status--error sub-form__error"
          role="alert"
          tabIndex={-1}
          ref={errorRef}
          id="sub-form-error"
        >
          <p className="status__title">
            {original ? 'Could not save the subscription' : 'Could not create the subscription'}
          </p>
          <p>{save.error.message}</p>
        </div>
      )}

      <div className="sub-form__fields">
        <fieldset className="form-card">
          <legend>What to match</legend>
          <Field id={ids.name} label="Name" error={errors.name}>
            <input
              id={ids.name}
              type="text"
              value={form.name}
              onChange={(event) => set('name', event.target.value)}
              placeholder="e.g. Fires over California"
              autoComplete="off"
              required
              {...invalid(ids.name, errors.name)}
            />
          </Field>
          <CollectionPicker
            selected={form.collections}
            onChange={(keys) => set('collections', keys)}
            error={errors.collections}
          />
          <AreaFields form={form} set={set} error={errors.bbox} />
          <fieldset className="subfields">
            <legend>Time window (optional)</legend>
            <p className="hint">Granules whose observation time overlaps these days (UTC).</p>
            <div className="field-row">
              <Field id={ids.start} label="From" error={errors.start}>
                <input
                  id={ids.start}
                  type="date"
                  value={form.start}
                  onChange={(event) => set('start', event.target.value)}
                  {...invalid(ids.start, errors.start)}
                />
              </Field>
              <Field id={ids.end} label="To" error={errors.end}>
                <input
                  id={ids.end}
                  type="date"
                  value={form.end}
                  onChange={(event) => set('end', event.target.value)}
                  {...invalid(ids.end, errors.end)}
                />
              </Field>
            </div>
          </fieldset>
          <fieldset className="subfields">
            <legend>Attributes (optional)</legend>
            <div className="field-row">
              <Field id={ids.dayNight} label="Day or night">
                <select
                  id={ids.dayNight}
                  value={form.dayNight}
                  onChange={(event) => set('dayNight', event.target.value as DayNight)}
                >
                  <option value="">Either</option>
                  <option value="Day">Day only</option>
                  <option value="Night">Night only</option>
                </select>
              </Field>
              <Field id={ids.cloud} label="Cloud cover below (%)">
                <input
                  id={ids.cloud}
                  type="number"
                  inputMode="decimal"
                  min={0}
                  max={100}
                  step="any"
                  value={form.cloudBelow}
                  onChange={(event) => set('cloudBelow', event.target.value)}
                />
              </Field>
            </div>
            <OtherConditions rows={form.others} onChange={(rows) => set('others', rows)} />
            {errors.conditions && (
              <p className="field-error" id="conditions-error">
                {errors.conditions}
              </p>
            )}
          </fieldset>
          <label className="check">
            <input
              type="checkbox"
              checked={form.newVersions}
              onChange={(event) => set('newVersions', event.target.checked)}
            />
            Also deliver new versions of granules that are reprocessed
          </label>
        </fieldset>

        <DeliveryFields form={form} set={set} errors={errors} />

        <fieldset className="form-card">
          <legend>Already archived</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={form.applySince}
              onChange={(event) => set('applySince', event.target.checked)}
            />
            Also deliver matching granules already archived since a date
          </label>
          {form.applySince && (
            <Field id={ids.since} label="Archived since">
              <input
                id={ids.since}
                type="date"
                value={form.since}
                onChange={(event) => set('since', event.target.value)}
              />
            </Field>
          )}
        </fieldset>
      </div>

      <PreviewPanel filter={settled} stale={JSON.stringify(settled) !== JSON.stringify(filter)} />

      <div className="sub-form__actions">
        <button type="submit" className="button" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : original ? 'Save changes' : 'Create subscription'}
        </button>
        <Link
          className="button button--quiet"
          to={original ? `/subscriptions/${original.id}` : '/subscriptions'}
        >
          Cancel
        </Link>
      </div>
    </form>
  );
}

function CollectionPicker({
  selected,
  onChange,
  error,
}: {
  selected: string[];
  onChange: (keys: string[]) => void;
  error?: string;
}) {
  const [text, setText] = useState('');
  const q = useDebounced(text.trim(), 300);
  const collections = useQuery(collectionsQuery({ q }));
  const findId = useId();
  const errorId = useId();

  function toggle(key: string, on: boolean) {
    onChange(on ? [...selected, key] : selected.filter((k) => k !== key));
  }

  return (
    <fieldset className="subfields" aria-describedby={error ? errorId : undefined}>
      <legend>Collections</legend>
      {selected.length > 0 ? (
        <ul className="chips" aria-label="Chosen collections">
          {selected.map((key) => (
            <li key={key} className="chip">
              <span className="mono">{key}</span>
              <button
                type="button"
                className="chip__remove"
                aria-label={`Remove ${key}`}
                onClick={() => toggle(key, false)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="hint">Choose one or more collections.</p>
      )}
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
      <div className="field">
        <label htmlFor={findId}>Find collections</label>
        <input
          id={findId}
          type="search"
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder="Name, title, platform or instrument"
          autoComplete="off"
        />
      </div>
      {collections.isPending && <p className="hint">Loading collections…</p>}
      {collections.isError && <p className="field-error">{collections.error.message}</p>}
      {collections.data && (
        <ul className="pick-list">
          {collections.data.results.length === 0 && (
            <li className="hint">No collection matches “{q}”.</li>
          )}
          {collections.data.results.map((collection) => (
            <li key={collection.id}>
              <label className="check">
                <input
                  type="checkbox"
                  checked={selected.includes(collection.key)}
                  onChange={(event) => toggle(collection.key, event.target.checked)}
                />
                <span>
                  <span className="mono">{collection.key}</span>{' '}
                  <span className="muted">{collection.title}</span>{' '}
                  {collection.access === 'restricted' && <AccessBadge access={collection.access} />}
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

const SIDES = [
  ['west', 'West'],
  ['south', 'South'],
  ['east', 'East'],
  ['north', 'North'],
] as const;

function AreaFields({ form, set, error }: { form: FormState; set: Setter; error?: string }) {
  const base = useId();
  const setShape = (shape: Geometry) => {
    for (const side of ['west', 'south', 'east', 'north'] as const) set(side, '');
    set('shape', shape);
  };
  return (
    <fieldset className="subfields" aria-describedby={error ? `${base}-error` : `${base}-hint`}>
      <legend>Area (optional)</legend>
      <p className="hint" id={`${base}-hint`}>
        A box in degrees; leave all four empty for anywhere. A west edge east of the east edge
        crosses the antimeridian. Or draw a box, a polygon or a point on the map, or upload a shape.
      </p>
      {form.shape && (
        <p>
          Within {describeShape(form.shape)}.{' '}
          <button
            type="button"
            className="button button--small button--quiet"
            onClick={() => set('shape', null)}
          >
            Clear the shape
          </button>
        </p>
      )}
      <div className="field-row field-row--four">
        {SIDES.map(([side, label]) => (
          <div className="field" key={side}>
            <label htmlFor={`${base}-${side}`}>{label}</label>
            <input
              id={`${base}-${side}`}
              type="number"
              inputMode="decimal"
              step="any"
              value={form[side]}
              onChange={(event) => {
                // A typed box replaces a drawn or uploaded shape.
                set('shape', null);
                set(side, event.target.value);
              }}
              aria-invalid={error ? true : undefined}
            />
          </div>
        ))}
      </div>
      {error && (
        <p className="field-error" id={`${base}-error`}>
          {error}
        </p>
      )}
      <div className="sub-form__map">
        <LazyBoxMap
          label="Area of the subscription"
          box={boxOf(form)}
          onBoxChange={(box) => {
            const [west, south, east, north] = formatBBox(box).split(',');
            set('shape', null);
            set('west', west ?? '');
            set('south', south ?? '');
            set('east', east ?? '');
            set('north', north ?? '');
          }}
          shape={form.shape}
          onShapeChange={setShape}
          tools={<ShapeUpload onShape={setShape} />}
        />
      </div>
    </fieldset>
  );
}

const OPS = Object.keys(OP_SYMBOLS) as ConditionOp[];

function OtherConditions({
  rows,
  onChange,
}: {
  rows: ConditionRow[];
  onChange: (rows: ConditionRow[]) => void;
}) {
  const base = useId();
  const addRef = useRef<HTMLButtonElement>(null);
  function update(key: number, change: Partial<ConditionRow>) {
    onChange(rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  }
  function remove(key: number) {
    onChange(rows.filter((row) => row.key !== key));
    addRef.current?.focus();
  }
  return (
    <div className="conditions">
      {rows.map((row, index) => {
        const id = `${base}-${row.key}`;
        return (
          <div
            className="condition"
            key={row.key}
            role="group"
            aria-label={`Condition ${index + 1}`}
          >
            <div className="field">
              <label htmlFor={`${id}-name`}>Attribute</label>
              <input
                id={`${id}-name`}
                type="text"
                value={row.name}
                onChange={(event) => update(row.key, { name: event.target.value })}
                placeholder="e.g. snow_cover_pct"
                autoComplete="off"
                spellCheck={false}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-op`}>Test</label>
              <select
                id={`${id}-op`}
                value={row.op}
                onChange={(event) => update(row.key, { op: event.target.value as ConditionOp })}
              >
                {OPS.map((op) => (
                  <option key={op} value={op}>
                    {OP_SYMBOLS[op]}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor={`${id}-value`}>Value</label>
              <input
                id={`${id}-value`}
                type="text"
                value={row.value}
                onChange={(event) => update(row.key, { value: event.target.value })}
                placeholder={row.op === 'in' ? 'a, b, c' : ''}
                autoComplete="off"
              />
            </div>
            <button
              type="button"
              className="button button--small button--quiet"
              onClick={() => remove(row.key)}
              aria-label={`Remove condition ${index + 1}`}
            >
              Remove
            </button>
          </div>
        );
      })}
      <button
        type="button"
        ref={addRef}
        className="button button--small button--quiet"
        onClick={() => onChange([...rows, newConditionRow()])}
      >
        Add a condition on another attribute
      </button>
    </div>
  );
}

const MODES = Object.keys(MODE_LABELS) as DeliveryMode[];

function DeliveryFields({
  form,
  set,
  errors,
}: {
  form: FormState;
  set: Setter;
  errors: Record<string, string>;
}) {
  const name = useId();
  return (
    <fieldset className="form-card">
      <legend>Delivery</legend>
      <div className="radios">
        {MODES.map((mode) => (
          <label className="check" key={mode}>
            <input
              type="radio"
              name={name}
              value={mode}
              checked={form.mode === mode}
              onChange={() => set('mode', mode)}
            />
            {MODE_LABELS[mode]}
          </label>
        ))}
      </div>
      {errors.mode && <p className="field-error">{errors.mode}</p>}
      {form.mode === 'push' && (
        <DestinationPicker
          value={form.destination}
          onChange={(id) => set('destination', id)}
          error={errors.destination}
        />
      )}
      {form.mode !== 'notify' && (
        <SubscriptionSubset
          collections={form.collections}
          draft={form.subset}
          onChange={(subset) => set('subset', subset)}
          error={errors.subset}
        />
      )}
    </fieldset>
  );
}

function PreviewPanel({ filter, stale }: { filter: SubscriptionFilter; stale: boolean }) {
  const enabled = filter.collections.length > 0;
  const preview = useQuery({ ...previewQuery(filter), enabled });
  const headingId = useId();
  let sentence: ReactNode;
  if (!enabled) sentence = 'Choose a collection to see how many recent granules match.';
  else if (preview.isError) sentence = <span className="field-error">{preview.error.message}</span>;
  else if (preview.data === undefined) sentence = 'Counting matching granules…';
  else sentence = countSentence(preview.data);
  const busy = enabled && (stale || preview.isFetching);
  return (
    <aside className="sub-form__preview form-card" aria-labelledby={headingId} aria-busy={busy}>
      <h2 id={headingId}>Preview</h2>
      <p className="preview__count" role="status" aria-live="polite" aria-atomic="true">
        {sentence}
      </p>
      {busy && preview.data !== undefined && <p className="hint">Updating…</p>}
      {enabled && !preview.isError && preview.data && preview.data.sample.length > 0 && (
        <>
          <h3 className="preview__subhead">Newest matches</h3>
          <ul className="preview__sample">
            {preview.data.sample.map((granule) => (
              <li key={granule.id}>
                <span className="mono wrap">{granule.granule_id}</span>
                <span className="muted small">
                  {granule.collection} · observed {formatDateTime(granule.temporal_start)}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      <p className="hint">
        Counts granules archived in the last {PREVIEW_DAYS} days: what this subscription would have
        delivered.
      </p>
    </aside>
  );
}

function countSentence(preview: Preview): string {
  const granules = preview.count === 1 ? 'granule' : 'granules';
  const verb = preview.count === 1 ? 'matches' : 'match';
  return `${formatCount(preview.count)} ${granules} of the last ${preview.days} days ${verb}.`;
}
