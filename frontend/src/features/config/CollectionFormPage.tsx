import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router';

import { bucketsQuery } from '../../lib/api/archive/buckets';
import { volumeGroupsQuery } from '../../lib/api/archive/volumeGroups';
import { configCollectionQuery, updateCollection } from '../../lib/api/config/collection';
import { createCollection } from '../../lib/api/config/collections';
import { configKeys } from '../../lib/api/config/keys';
import type { CollectionConfig } from '../../lib/api/types';
import { Field, invalid } from '../../components/Field';
import { LoadedPage } from '../../components/LoadedPage';
import {
  bodyOf,
  copyTargets,
  emptyForm,
  formFrom,
  UNITS,
  type FormState,
  type Unit,
} from './collectionForm';
import { errorsOf } from '../../lib/api/configErrors';

const MAX_COPIES = 4;
type Setter = <K extends keyof FormState>(key: K, value: FormState[K]) => void;

const back = (
  <p className="breadcrumb">
    <Link to="/config">Collections</Link> /
  </p>
);

/** /config/collections/new, or /config/collections/:key to change one. */
export function CollectionFormPage() {
  const { key } = useParams();
  const existing = useQuery({ ...configCollectionQuery(key ?? ''), enabled: key !== undefined });
  if (key === undefined) return <CollectionForm />;
  return (
    <LoadedPage query={existing} title={key} what="this collection" back={back}>
      {(collection) => <CollectionForm original={collection} />}
    </LoadedPage>
  );
}

function CollectionForm({ original }: { original?: CollectionConfig }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<FormState>(() => (original ? formFrom(original) : emptyForm()));
  const set: Setter = (name, value) => setForm((old) => ({ ...old, [name]: value }));
  const save = useMutation({
    mutationFn: () =>
      original ? updateCollection(original.key, bodyOf(form)) : createCollection(bodyOf(form)),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: configKeys.all });
      const notice = original ? `Saved ${saved.key}.` : `Collection ${saved.key} created.`;
      await navigate('/config', { state: { notice } });
    },
  });
  const errors = errorsOf(save.error);
  const text = (name: keyof FormState, label: string, extra: { hint?: string } = {}) => (
    <TextField name={name} label={label} form={form} set={set} error={errors[name]} {...extra} />
  );

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate();
  }

  const title = original ? `Collection ${original.key}` : 'New collection';
  return (
    <section className="page" aria-labelledby="collection-form-heading">
      {back}
      <h1 id="collection-form-heading">{title}</h1>
      <form className="config-form" onSubmit={onSubmit} noValidate>
        {save.isError && (
          <div className="status status--error" role="alert">
            <p className="status__title">Could not save the collection</p>
            <p>{save.error.message}</p>
          </div>
        )}
        <fieldset className="form-card">
          <legend>Product</legend>
          <div className="config-form__row">
            {text('short_name', 'Short name')}
            {text('version', 'Version')}
          </div>
          {text('title', 'Title')}
          <TextArea name="description" label="Description" form={form} set={set} errors={errors} />
          <div className="config-form__row">
            {text('processing_level', 'Processing level')}
            {text('platform', 'Platform')}
            {text('instrument', 'Instrument')}
          </div>
          {text('doi', 'DOI')}
          <TextArea name="citation" label="Citation" form={form} set={set} errors={errors} />
          <TextArea
            name="variables"
            label="Variables (one a line: name | units | long name)"
            form={form}
            set={set}
            errors={errors}
          />
        </fieldset>
        <fieldset className="form-card">
          <legend>Ingest and access</legend>
          <TextArea
            name="file_patterns"
            label="File patterns (regular expressions, one a line; group (?P<granule>…) names the granule)"
            form={form}
            set={set}
            errors={errors}
            mono
          />
          <div className="config-form__row">
            <Field id="cf-access" label="Access" error={errors.access}>
              <select
                id="cf-access"
                value={form.access}
                onChange={(e) => set('access', e.target.value as FormState['access'])}
              >
                <option value="public">Public</option>
                <option value="restricted">Restricted</option>
              </select>
            </Field>
            <Field id="cf-duplicate" label="Duplicate policy" error={errors.duplicate_policy}>
              <select
                id="cf-duplicate"
                value={form.duplicate_policy}
                onChange={(e) =>
                  set('duplicate_policy', e.target.value as FormState['duplicate_policy'])
                }
              >
                <option value="error">Refuse the duplicate</option>
                <option value="skip">Keep the archived granule</option>
                <option value="replace">Replace the archived granule</option>
                <option value="version">Archive as a new version</option>
              </select>
            </Field>
          </div>
          {text('approved_users', 'Approved users (user names, comma-separated)')}
        </fieldset>
        <PolicyFields form={form} set={set} errors={errors} />
        <ExtentFields form={form} set={set} errors={errors} />
        <fieldset className="form-card">
          <legend>Completeness</legend>
          <div className="config-form__row">
            <Duration
              label="One granule every"
              value="cadence"
              unit="cadence_unit"
              form={form}
              set={set}
              error={errors.cadence_seconds}
            />
            <Duration
              label="Archived within (after its end)"
              value="latency"
              unit="latency_unit"
              form={form}
              set={set}
              error={errors.latency_target_seconds}
            />
          </div>
        </fieldset>
        {text('reason', 'Reason (kept in the audit log)')}
        <div className="actions">
          <button className="button" type="submit" disabled={save.isPending}>
            {original ? 'Save changes' : 'Create collection'}
          </button>
          <Link className="button button--quiet" to="/config">
            Cancel
          </Link>
        </div>
      </form>
    </section>
  );
}

function TextField({
  name,
  label,
  form,
  set,
  error,
  hint,
}: {
  name: keyof FormState;
  label: string;
  form: FormState;
  set: Setter;
  error?: string;
  hint?: string;
}) {
  const id = `cf-${name}`;
  return (
    <Field id={id} label={label} error={error}>
      <input
        id={id}
        type="text"
        value={form[name] as string}
        onChange={(e) => set(name, e.target.value)}
        autoComplete="off"
        {...invalid(id, error)}
      />
      {hint && <p className="hint">{hint}</p>}
    </Field>
  );
}

function TextArea({
  name,
  label,
  form,
  set,
  errors,
  mono = false,
}: {
  name: 'description' | 'citation' | 'variables' | 'file_patterns';
  label: string;
  form: FormState;
  set: Setter;
  errors: Record<string, string>;
  mono?: boolean;
}) {
  const id = `cf-${name}`;
  return (
    <Field id={id} label={label} error={errors[name]}>
      <textarea
        id={id}
        className={mono ? 'mono' : undefined}
        rows={3}
        value={form[name]}
        onChange={(e) => set(name, e.target.value)}
        {...invalid(id, errors[name])}
      />
    </Field>
  );
}

function PolicyFields({
  form,
  set,
  errors,
}: {
  form: FormState;
  set: Setter;
  errors: Record<string, string>;
}) {
  const groups = useQuery(volumeGroupsQuery());
  const buckets = useQuery(bucketsQuery());
  const targets = copyTargets(groups.data ?? [], buckets.data ?? []);
  const tape = targets.filter((t) => t.medium === 'tape');
  const objects = targets.filter((t) => t.medium === 'object');
  const copiesError = errors.copies ?? errors.policy;
  const resize = (count: number) =>
    set(
      'copies',
      Array.from({ length: count }, (_, i) => form.copies[i] ?? ''),
    );
  return (
    <fieldset className="form-card" aria-describedby={copiesError ? 'cf-copies-error' : undefined}>
      <legend>Archive policy</legend>
      <div className="config-form__row">
        <Field id="cf-copy-count" label="Number of copies">
          <select
            id="cf-copy-count"
            value={form.copies.length}
            onChange={(e) => resize(Number(e.target.value))}
          >
            {Array.from({ length: MAX_COPIES }, (_, i) => (
              <option key={i} value={i + 1}>
                {i + 1}
              </option>
            ))}
          </select>
        </Field>
        <Field
          id="cf-cache_residency_days"
          label="Days new granules stay in the cache"
          error={errors.cache_residency_days}
        >
          <input
            id="cf-cache_residency_days"
            type="number"
            min={0}
            value={form.cache_residency_days}
            onChange={(e) => set('cache_residency_days', e.target.value)}
            {...invalid('cf-cache_residency_days', errors.cache_residency_days)}
          />
        </Field>
      </div>
      <div className="config-form__row">
        {form.copies.map((target, index) => (
          <Field key={index} id={`cf-copy-${index + 1}`} label={`Copy ${index + 1} target`}>
            <select
              id={`cf-copy-${index + 1}`}
              value={target}
              onChange={(e) =>
                set(
                  'copies',
                  form.copies.map((old, i) => (i === index ? e.target.value : old)),
                )
              }
              {...invalid('cf-copies', copiesError)}
            >
              <option value="">Choose a volume group or bucket…</option>
              <optgroup label="Tape: volume groups">
                {tape.map((t) => (
                  <option key={t.name} value={t.name}>
                    {t.label}
                  </option>
                ))}
              </optgroup>
              {objects.length > 0 && (
                <optgroup label="Object store: buckets">
                  {objects.map((t) => (
                    <option key={t.name} value={t.name}>
                      {t.label}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          </Field>
        ))}
      </div>
      {copiesError && (
        <p className="field-error" id="cf-copies-error">
          {copiesError}
        </p>
      )}
      <p className="hint">
        Each copy goes to a volume group (tape) or a bucket (object store). Where there are several
        silos, each tape copy goes to another silo.
      </p>
    </fieldset>
  );
}

function ExtentFields({
  form,
  set,
  errors,
}: {
  form: FormState;
  set: Setter;
  errors: Record<string, string>;
}) {
  const sides = [
    ['extent_west', 'West'],
    ['extent_south', 'South'],
    ['extent_east', 'East'],
    ['extent_north', 'North'],
  ] as const;
  const times = [
    ['extent_start', 'Starts (UTC)'],
    ['extent_end', 'Ends (UTC; blank: ongoing)'],
  ] as const;
  return (
    <fieldset className="form-card">
      <legend>Declared extent</legend>
      <div className="config-form__row">
        {sides.map(([name, label]) => (
          <Field key={name} id={`cf-${name}`} label={`${label} (°)`} error={errors[name]}>
            <input
              id={`cf-${name}`}
              type="number"
              step="any"
              value={form[name]}
              onChange={(e) => set(name, e.target.value)}
              {...invalid(`cf-${name}`, errors[name])}
            />
          </Field>
        ))}
      </div>
      <div className="config-form__row">
        {times.map(([name, label]) => (
          <Field key={name} id={`cf-${name}`} label={label} error={errors[name]}>
            <input
              id={`cf-${name}`}
              type="datetime-local"
              value={form[name]}
              onChange={(e) => set(name, e.target.value)}
              {...invalid(`cf-${name}`, errors[name])}
            />
          </Field>
        ))}
      </div>
    </fieldset>
  );
}

function Duration({
  label,
  value,
  unit,
  form,
  set,
  error,
}: {
  label: string;
  value: 'cadence' | 'latency';
  unit: 'cadence_unit' | 'latency_unit';
  form: FormState;
  set: Setter;
  error?: string;
}): ReactNode {
  const id = `cf-${value}`;
  return (
    <Field id={id} label={label} error={error}>
      <div className="config-form__duration">
        <input
          id={id}
          type="number"
          min={0}
          step="any"
          value={form[value]}
          onChange={(e) => set(value, e.target.value)}
          {...invalid(id, error)}
        />
        <select
          aria-label={`${label}: unit`}
          value={form[unit]}
          onChange={(e) => set(unit, e.target.value as Unit)}
        >
          {Object.keys(UNITS).map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </div>
    </Field>
  );
}
