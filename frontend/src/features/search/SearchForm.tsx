import type { UseQueryResult } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { Link } from 'react-router';

import type { BBox, Collection, FacetValue, GranuleFacets, Page } from '../../lib/api/types';
import { formatCount } from '../../lib/format';
import { describeShape } from '../../lib/shapeParam';
import { emptySearch, type DayNight, type SearchState } from './searchState';

type Edges = Record<'west' | 'south' | 'east' | 'north', string>;

const EDGES: { key: keyof Edges; label: string; min: number; max: number }[] = [
  { key: 'west', label: 'West', min: -180, max: 180 },
  { key: 'south', label: 'South', min: -90, max: 90 },
  { key: 'east', label: 'East', min: -180, max: 180 },
  { key: 'north', label: 'North', min: -90, max: 90 },
];

function edgesOf(bbox: BBox | null): Edges {
  const [west, south, east, north] = bbox ? bbox.map(String) : ['', '', '', ''];
  return { west: west ?? '', south: south ?? '', east: east ?? '', north: north ?? '' };
}

/** The box the four fields give, null for none, or a sentence saying what is missing. */
function boxOf(edges: Edges): BBox | null | string {
  const texts = EDGES.map(({ key }) => edges[key].trim());
  if (texts.every((text) => text === '')) return null;
  if (texts.some((text) => text === '')) return 'Give all four edges of the box, or none.';
  const numbers = texts.map(Number);
  if (numbers.some((n) => !Number.isFinite(n)))
    return 'The edges of the box are numbers of degrees.';
  return numbers as BBox;
}

/**
 * The search form. Lists and choices apply at once; typed fields apply with Search (or Enter),
 * so a half-typed date or coordinate never fires a request.
 */
export function SearchForm({
  draft,
  onDraftChange,
  onApply,
  collections,
  facets,
}: {
  draft: SearchState;
  onDraftChange: (next: SearchState) => void;
  onApply: (next: SearchState) => void;
  collections: UseQueryResult<Page<Collection>>;
  facets: GranuleFacets | undefined;
}) {
  const id = useId();
  const [edges, setEdges] = useState(() => edgesOf(draft.bbox));
  const [edgesFor, setEdgesFor] = useState(draft.bbox);
  const [boxError, setBoxError] = useState('');
  // On a phone only the free text shows until asked for more, so results fit the first screen.
  const [open, setOpen] = useState(false);
  // A box drawn on the map (or read from the address) replaces what the fields held.
  if (edgesFor !== draft.bbox) {
    setEdgesFor(draft.bbox);
    setEdges(edgesOf(draft.bbox));
  }

  function change(patch: Partial<SearchState>, now = false) {
    const next = { ...draft, ...patch };
    onDraftChange(next);
    if (now) submit(next);
  }

  function submit(next: SearchState) {
    const box = boxOf(edges);
    if (typeof box === 'string') {
      setBoxError(box);
      return;
    }
    setBoxError('');
    // A typed box replaces a drawn or uploaded shape.
    onApply({ ...next, bbox: box, shape: box ? null : next.shape });
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    submit(draft);
  }

  function toggleCollection(key: string, on: boolean) {
    const chosen = on ? [...draft.collections, key] : draft.collections.filter((k) => k !== key);
    change({ collections: chosen }, true);
  }

  const counts = new Map((facets?.collection ?? []).map((facet) => [facet.value, facet.count]));

  return (
    <form
      className="search-form"
      role="search"
      aria-label="Granule search"
      onSubmit={onSubmit}
      noValidate
    >
      <div className="search-form__text">
        <div className="field">
          <label htmlFor={`${id}-q`}>Granule id or words</label>
          <input
            id={`${id}-q`}
            name="q"
            type="search"
            value={draft.q}
            onChange={(event) => change({ q: event.target.value })}
            placeholder="MOD021KM.A2026*, snow, Terra…"
            aria-describedby={`${id}-q-hint`}
            autoComplete="off"
            spellCheck={false}
          />
        </div>
        <p className="hint" id={`${id}-q-hint`}>
          Each word a granule id (* and ? are wildcards) or a word of a collection&apos;s name,
          title, platform or instrument.
        </p>
        <button
          type="button"
          className="button button--quiet button--small search-form__toggle"
          aria-expanded={open}
          aria-controls={`${id}-more`}
          onClick={() => setOpen(!open)}
        >
          {open ? 'Fewer filters' : 'More filters'}
        </button>
      </div>

      <div className="search-form__more" id={`${id}-more`} data-open={open}>
        <fieldset className="search-form__group">
          <legend>Collections</legend>
          <FacetSelect
            id={`${id}-level`}
            label="Processing level"
            value={draft.processingLevel}
            values={facets?.processing_level}
            onChange={(value) => change({ processingLevel: value }, true)}
          />
          <FacetSelect
            id={`${id}-platform`}
            label="Platform"
            value={draft.platform}
            values={facets?.platform}
            onChange={(value) => change({ platform: value }, true)}
          />
          <FacetSelect
            id={`${id}-instrument`}
            label="Instrument"
            value={draft.instrument}
            values={facets?.instrument}
            onChange={(value) => change({ instrument: value }, true)}
          />
          <CollectionChoices
            query={collections}
            chosen={draft.collections}
            counts={counts}
            onToggle={toggleCollection}
          />
        </fieldset>

        <fieldset className="search-form__group">
          <legend>Where</legend>
          <p className="hint" id={`${id}-box-hint`}>
            Degrees; west greater than east crosses the antimeridian. Or draw a box, a polygon or a
            point on the map, or upload a shape.
          </p>
          {draft.shape && (
            <p className="search-form__shape">
              Searching within {describeShape(draft.shape)}.{' '}
              <button
                type="button"
                className="button button--small button--quiet"
                onClick={() => onApply({ ...draft, shape: null })}
              >
                Clear the shape
              </button>
            </p>
          )}
          <div className="search-form__edges">
            {EDGES.map(({ key, label, min, max }) => (
              <div className="field" key={key}>
                <label htmlFor={`${id}-${key}`}>{label}</label>
                <input
                  id={`${id}-${key}`}
                  name={key}
                  type="number"
                  inputMode="decimal"
                  step="any"
                  min={min}
                  max={max}
                  value={edges[key]}
                  aria-describedby={`${id}-box-hint`}
                  aria-invalid={boxError ? true : undefined}
                  onChange={(event) => setEdges({ ...edges, [key]: event.target.value })}
                />
              </div>
            ))}
          </div>
          {boxError && (
            <p className="field-error" role="alert">
              {boxError}
            </p>
          )}
          {draft.bbox && (
            <button
              type="button"
              className="button button--small button--quiet"
              onClick={() => {
                setEdges(edgesOf(null));
                onApply({ ...draft, bbox: null });
              }}
            >
              Clear the box
            </button>
          )}
        </fieldset>

        <fieldset className="search-form__group">
          <legend>When (UTC)</legend>
          <div className="search-form__dates">
            <div className="field">
              <label htmlFor={`${id}-start`}>From</label>
              <input
                id={`${id}-start`}
                name="start"
                type="date"
                value={draft.start}
                max={draft.end || undefined}
                onChange={(event) => change({ start: event.target.value })}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-end`}>To</label>
              <input
                id={`${id}-end`}
                name="end"
                type="date"
                value={draft.end}
                min={draft.start || undefined}
                onChange={(event) => change({ end: event.target.value })}
              />
            </div>
          </div>
        </fieldset>

        <fieldset className="search-form__group">
          <legend>Granule attributes</legend>
          <div className="search-form__pair">
            <div className="field">
              <label htmlFor={`${id}-daynight`}>Day or night</label>
              <select
                id={`${id}-daynight`}
                value={draft.dayNight}
                onChange={(event) => change({ dayNight: event.target.value as DayNight }, true)}
              >
                <option value="">Either</option>
                <option value="Day">Day</option>
                <option value="Night">Night</option>
              </select>
            </div>
            <div className="field">
              <label htmlFor={`${id}-cloud`}>Cloud cover below (%)</label>
              <input
                id={`${id}-cloud`}
                name="cloud_below"
                type="number"
                inputMode="numeric"
                min={0}
                max={100}
                value={draft.cloudBelow}
                onChange={(event) => change({ cloudBelow: event.target.value })}
              />
            </div>
          </div>
          <p className="hint">Granules without the attribute are left out when it is set.</p>
        </fieldset>
      </div>

      <div className="search-form__actions">
        <button type="submit" className="button">
          Search
        </button>
        <Link
          className="button button--quiet"
          to="/search"
          onClick={() => onDraftChange(emptySearch)}
        >
          Clear all
        </Link>
      </div>
    </form>
  );
}

function FacetSelect({
  id,
  label,
  value,
  values,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  values: FacetValue[] | undefined;
  onChange: (value: string) => void;
}) {
  const options = values ?? [];
  // A value from a shared link stays selectable even when nothing matches it now.
  const shown =
    value && !options.some((option) => option.value === value)
      ? [{ value, count: 0 }, ...options]
      : options;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">Any</option>
        {shown.map((option) => (
          <option key={option.value} value={option.value}>
            {option.value} ({formatCount(option.count)})
          </option>
        ))}
      </select>
    </div>
  );
}

function CollectionChoices({
  query,
  chosen,
  counts,
  onToggle,
}: {
  query: UseQueryResult<Page<Collection>>;
  chosen: string[];
  counts: Map<string, number>;
  onToggle: (key: string, on: boolean) => void;
}) {
  if (query.isPending) return <p className="hint">Loading collections…</p>;
  if (query.isError) {
    return (
      <p className="field-error" role="alert">
        Could not load the collections: {query.error.message}
      </p>
    );
  }
  const listed = query.data.results;
  const keys = new Set(listed.map((c) => c.key));
  // Chosen collections stay in the list (and can be unchosen) whatever the free text says.
  const missing = chosen.filter((key) => !keys.has(key));
  return (
    <fieldset className="search-form__collections">
      <legend>Search in</legend>
      {listed.length === 0 && missing.length === 0 && (
        <p className="hint">No collection matches.</p>
      )}
      {listed.length > 0 && chosen.length === 0 && (
        <p className="hint">
          All {listed.length === 1 ? 'one' : listed.length} listed; tick some to narrow.
        </p>
      )}
      <ul className="search-form__checks">
        {missing.map((key) => (
          <li key={key}>
            <label className="check">
              <input type="checkbox" checked onChange={() => onToggle(key, false)} />
              <span className="mono">{key}</span>
            </label>
          </li>
        ))}
        {listed.map((collection) => (
          <li key={collection.key}>
            <label className="check">
              <input
                type="checkbox"
                checked={chosen.includes(collection.key)}
                onChange={(event) => onToggle(collection.key, event.target.checked)}
              />
              <span>
                <span className="mono">{collection.key}</span>{' '}
                <span className="muted">({formatCount(counts.get(collection.key) ?? 0)})</span>
                <span className="search-form__title">{collection.title}</span>
              </span>
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}
