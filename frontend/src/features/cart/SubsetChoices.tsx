import type { SubsetEstimate, SubsetFormat, SubsetOptions } from '../../lib/api/types';
import { Field } from '../../components/Field';
import { formatBytes } from '../../lib/format';

/** What the reader chose, as typed (numbers stay text until they are sent). */
export interface SubsetDraft {
  on: boolean;
  variables: string[];
  box: { west: string; south: string; east: string; north: string };
  start: string;
  end: string;
  format: SubsetFormat;
}

export const NO_SUBSET: SubsetDraft = {
  on: false,
  variables: [],
  box: { west: '', south: '', east: '', north: '' },
  start: '',
  end: '',
  format: 'netcdf4',
};

const COORDINATES = new Set(['time', 'lat', 'lon', 'latitude', 'longitude']);
const SIDES = { west: 'West', south: 'South', east: 'East', north: 'North' } as const;

/** The options the API takes; null when nothing is cut. A box is sent once all four sides are. */
export function subsetOptions(draft: SubsetDraft): SubsetOptions | null {
  if (!draft.on) return null;
  const { west, south, east, north } = draft.box;
  const sides = [west, south, east, north].map((side) => side.trim());
  const whole = sides.every((side) => side !== '');
  return {
    variables: draft.variables,
    bbox: whole ? [Number(west), Number(south), Number(east), Number(north)] : null,
    start: draft.start.trim() || null,
    end: draft.end.trim() || null,
    format: draft.format,
  };
}

/**
 * Cutting each data file to what the reader needs: variables, a box (west > east crosses
 * 180°), a time range and the output format, with the size the API estimates for the cart.
 */
export function SubsetChoices({
  draft,
  onChange,
  estimate,
  refusal,
}: {
  draft: SubsetDraft;
  onChange: (draft: SubsetDraft) => void;
  estimate: SubsetEstimate | undefined;
  refusal: string | null;
}) {
  const variables = [
    ...new Set(
      (estimate?.collections ?? [])
        .flatMap((c) => c.variables)
        .filter((name) => !COORDINATES.has(name.toLowerCase())),
    ),
  ];
  const cannot = (estimate?.collections ?? []).filter((c) => !c.subsettable);
  const toggle = (name: string) =>
    onChange({
      ...draft,
      variables: draft.variables.includes(name)
        ? draft.variables.filter((v) => v !== name)
        : [...draft.variables, name],
    });
  return (
    <fieldset className="cart-page__delivery cart-subset">
      <legend>Subset</legend>
      <label className="check">
        <input
          type="checkbox"
          checked={draft.on}
          onChange={(event) => onChange({ ...draft, on: event.target.checked })}
        />
        <span>
          Cut each file to what I need
          <span className="hint">
            Only the variables, area and times you choose, in the format you choose.
          </span>
        </span>
      </label>
      {draft.on && (
        <>
          {cannot.length > 0 && (
            <p className="notice notice--error">
              {cannot.map((c) => c.collection).join(', ')} cannot be cut: order it apart.
            </p>
          )}
          <fieldset className="cart-subset__variables">
            <legend>Variables (none ticked: all)</legend>
            {variables.map((name) => (
              <label key={name} className="check">
                <input
                  type="checkbox"
                  checked={draft.variables.includes(name)}
                  onChange={() => toggle(name)}
                />
                <span className="mono">{name}</span>
              </label>
            ))}
          </fieldset>
          <fieldset className="cart-subset__box">
            <legend>Area in degrees (west greater than east crosses 180°)</legend>
            {(Object.keys(SIDES) as (keyof typeof SIDES)[]).map((side) => (
              <Field key={side} id={`subset-${side}`} label={SIDES[side]}>
                <input
                  id={`subset-${side}`}
                  type="text"
                  inputMode="decimal"
                  value={draft.box[side]}
                  onChange={(event) =>
                    onChange({ ...draft, box: { ...draft.box, [side]: event.target.value } })
                  }
                />
              </Field>
            ))}
          </fieldset>
          <div className="cart-subset__times">
            <Field id="subset-start" label="From (UTC, ISO 8601)">
              <input
                id="subset-start"
                type="text"
                value={draft.start}
                placeholder="2026-11-01T00:00:00Z"
                onChange={(event) => onChange({ ...draft, start: event.target.value })}
              />
            </Field>
            <Field id="subset-end" label="Until (UTC, ISO 8601)">
              <input
                id="subset-end"
                type="text"
                value={draft.end}
                placeholder="2026-11-02T00:00:00Z"
                onChange={(event) => onChange({ ...draft, end: event.target.value })}
              />
            </Field>
          </div>
          <Field id="subset-format" label="Output format">
            <select
              id="subset-format"
              value={draft.format}
              onChange={(event) =>
                onChange({ ...draft, format: event.target.value as SubsetFormat })
              }
            >
              {(estimate?.formats ?? []).map((f) => (
                <option key={f.name} value={f.name}>
                  {f.label}
                </option>
              ))}
            </select>
          </Field>
          <p className="cart-subset__estimate" role="status">
            {refusal ? (
              <span className="field-error">{refusal}</span>
            ) : estimate ? (
              `About ${formatBytes(estimate.estimate)} of ${formatBytes(estimate.bytes)} (an estimate)`
            ) : (
              'Estimating…'
            )}
          </p>
        </>
      )}
    </fieldset>
  );
}
