import { type FormEvent, useId, useState } from 'react';

import type { GranuleFilterName, GranuleFilters } from '../../lib/api/console/keys';
import { GRANULE_STATES } from './states';

interface FieldSpec {
  name: GranuleFilterName;
  label: string;
  type: 'text' | 'date';
  placeholder?: string;
}

const TEXT_FIELDS: FieldSpec[] = [
  { name: 'granule_id', label: 'Granule id', type: 'text', placeholder: 'MOD09*.A2026?' },
  { name: 'collection', label: 'Collection', type: 'text', placeholder: 'SHORT.VERSION' },
  { name: 'provider', label: 'Provider', type: 'text', placeholder: 'e.g. MODAPS' },
];

const DATE_PAIRS: [string, FieldSpec, FieldSpec][] = [
  [
    'Ingested',
    { name: 'created_from', label: 'Ingested from', type: 'date' },
    { name: 'created_to', label: 'Ingested to', type: 'date' },
  ],
  [
    'Archived',
    { name: 'archived_from', label: 'Archived from', type: 'date' },
    { name: 'archived_to', label: 'Archived to', type: 'date' },
  ],
  [
    'Data time',
    { name: 'start', label: 'Data from', type: 'date' },
    { name: 'end', label: 'Data to', type: 'date' },
  ],
];

/**
 * The operator's granule filter: ids with `*` and `?`, collection, provider, state and three
 * date ranges. Submitting hands the filled fields up (the page keeps them in its URL).
 */
export function FilterForm({
  filters,
  errors,
  onApply,
}: {
  filters: GranuleFilters;
  errors: Record<string, string>;
  onApply: (filters: GranuleFilters) => void;
}) {
  const [draft, setDraft] = useState<GranuleFilters>(filters);
  const id = useId();
  const set = (name: GranuleFilterName, value: string) => setDraft({ ...draft, [name]: value });
  // On a narrow screen the date ranges fold away unless one is in use.
  const compact =
    typeof window !== 'undefined' && window.matchMedia?.('(max-width: 40rem)')?.matches === true;
  const datesSet = DATE_PAIRS.some(([, from, to]) => filters[from.name] || filters[to.name]);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const filled = Object.fromEntries(
      Object.entries(draft).filter(([, value]) => value && value.trim()),
    ) as GranuleFilters;
    onApply(filled);
  }

  function input(spec: FieldSpec) {
    const inputId = `${id}-${spec.name}`;
    const error = errors[spec.name];
    return (
      <div className="field" key={spec.name}>
        <label htmlFor={inputId}>{spec.label}</label>
        <input
          id={inputId}
          type={spec.type}
          value={draft[spec.name] ?? ''}
          placeholder={spec.placeholder}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${inputId}-error` : undefined}
          onChange={(event) => set(spec.name, event.target.value)}
        />
        {error && (
          <p className="field-error" id={`${inputId}-error`}>
            {error}
          </p>
        )}
      </div>
    );
  }

  return (
    <form className="cg-filter form-card" onSubmit={onSubmit} aria-label="Filter granules">
      <div className="cg-filter__grid">
        {TEXT_FIELDS.map(input)}
        <div className="field">
          <label htmlFor={`${id}-state`}>State</label>
          <select
            id={`${id}-state`}
            value={draft.state ?? ''}
            onChange={(event) => set('state', event.target.value)}
          >
            <option value="">Any state</option>
            {GRANULE_STATES.map((state) => (
              <option key={state} value={state}>
                {state}
              </option>
            ))}
          </select>
        </div>
      </div>
      <details className="cg-filter__more" open={datesSet || !compact}>
        <summary>Date ranges</summary>
        <div className="cg-filter__dates">
          {DATE_PAIRS.map(([group, from, to]) => (
            <fieldset className="cg-filter__pair" key={group}>
              <legend>{group}</legend>
              {input(from)}
              {input(to)}
            </fieldset>
          ))}
        </div>
      </details>
      <div className="cg-filter__actions">
        <button type="submit" className="button">
          Find granules
        </button>
        <button
          type="button"
          className="button button--quiet"
          onClick={() => {
            setDraft({});
            onApply({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
