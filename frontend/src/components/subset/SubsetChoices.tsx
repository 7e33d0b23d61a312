import type { ReactNode } from 'react';

import type { SubsetFormat, SubsetOptions } from '../../lib/api/types';
import type { SearchArea } from '../../lib/searchArea';
import { describeShape, type Geometry } from '../../lib/shapeParam';
import { Field, TextField } from '../Field';
import './subset.css';

/** What the reader chose, as typed (numbers stay text until they are sent). */
export interface SubsetDraft {
  on: boolean;
  variables: string[];
  box: { west: string; south: string; east: string; north: string };
  /** The search's shape, chosen as the area (it replaces the box). */
  shape: Geometry | null;
  start: string;
  end: string;
  format: SubsetFormat;
}

export const NO_SUBSET: SubsetDraft = {
  on: false,
  variables: [],
  box: { west: '', south: '', east: '', north: '' },
  shape: null,
  start: '',
  end: '',
  format: 'netcdf4',
};

/** The output formats, as the API names them (cart/subset/ sends the same with its labels). */
export const SUBSET_FORMATS: { name: SubsetFormat; label: string }[] = [
  { name: 'netcdf4', label: 'NetCDF-4 as delivered (its own compression and chunks)' },
  {
    name: 'netcdf4-compressed',
    label: 'NetCDF-4, every variable compressed (zlib level 4, shuffle)',
  },
  { name: 'zarr-zip', label: 'Zarr store (format 2, consolidated metadata) in one .zip' },
];

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
    bbox: !draft.shape && whole ? [Number(west), Number(south), Number(east), Number(north)] : null,
    ...(draft.shape ? { intersects: draft.shape as SubsetOptions['intersects'] } : {}),
    start: draft.start.trim() || null,
    end: draft.end.trim() || null,
    format: draft.format,
  };
}

/** A stored subset (an order's or a subscription's) as a draft to edit. */
export function subsetDraft(options: SubsetOptions | null | undefined): SubsetDraft {
  if (!options) return NO_SUBSET;
  const [west, south, east, north] = (options.bbox ?? []).map(String);
  return {
    on: true,
    variables: options.variables ?? [],
    box: { west: west ?? '', south: south ?? '', east: east ?? '', north: north ?? '' },
    shape: (options.intersects as Geometry | null | undefined) ?? null,
    start: options.start ?? '',
    end: options.end ?? '',
    format: options.format ?? 'netcdf4',
  };
}

/**
 * Cutting each data file to what the reader needs: variables, an area (a box, west > east
 * crossing 180°, or the search's own shape), a time range and the output format. Shared by
 * the cart (with the API's estimate as `status`) and the subscription form.
 */
export function SubsetChoices({
  draft,
  onChange,
  variables,
  formats,
  cannot,
  searchArea,
  status,
  className = '',
}: {
  draft: SubsetDraft;
  onChange: (draft: SubsetDraft) => void;
  variables: string[];
  formats: { name: string; label: string }[];
  /** Collections whose files cannot be cut. */
  cannot: string[];
  /** The last search's area, offered as the area to cut to. */
  searchArea: SearchArea | null;
  status?: ReactNode;
  /** The fieldset's look where it sits (the cart's boxed sections). */
  className?: string;
}) {
  const names = [...new Set(variables.filter((name) => !COORDINATES.has(name.toLowerCase())))];
  const toggle = (name: string) =>
    onChange({
      ...draft,
      variables: draft.variables.includes(name)
        ? draft.variables.filter((v) => v !== name)
        : [...draft.variables, name],
    });
  const box = (sides: SubsetDraft['box']) => onChange({ ...draft, box: sides, shape: null });
  return (
    <fieldset className={`subset-choices ${className}`.trim()}>
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
              {cannot.join(', ')} cannot be cut: order it apart.
            </p>
          )}
          <fieldset className="subset-choices__variables">
            <legend>Variables (none ticked: all)</legend>
            {names.map((name) => (
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
          {draft.shape ? (
            <div className="subset-choices__shape">
              <p>
                <strong>Area:</strong> the search&apos;s shape, {describeShape(draft.shape)}.
              </p>
              <button
                type="button"
                className="button button--quiet button--small"
                onClick={() => onChange({ ...draft, shape: null })}
              >
                Use a box instead
              </button>
            </div>
          ) : (
            <fieldset className="subset-choices__box">
              <legend>Area in degrees (west greater than east crosses 180°)</legend>
              {(Object.keys(SIDES) as (keyof typeof SIDES)[]).map((side) => (
                <TextField
                  key={side}
                  id={`subset-${side}`}
                  label={SIDES[side]}
                  inputMode="decimal"
                  value={draft.box[side]}
                  onChange={(value) => box({ ...draft.box, [side]: value })}
                />
              ))}
              {searchArea && (
                <SearchAreaOffer area={searchArea} draft={draft} onChange={onChange} />
              )}
            </fieldset>
          )}
          <div className="subset-choices__times">
            <TextField
              id="subset-start"
              label="From (UTC, ISO 8601)"
              value={draft.start}
              placeholder="2026-11-01T00:00:00Z"
              onChange={(start) => onChange({ ...draft, start })}
            />
            <TextField
              id="subset-end"
              label="Until (UTC, ISO 8601)"
              value={draft.end}
              placeholder="2026-11-02T00:00:00Z"
              onChange={(end) => onChange({ ...draft, end })}
            />
          </div>
          <Field id="subset-format" label="Output format">
            <select
              id="subset-format"
              value={draft.format}
              onChange={(event) =>
                onChange({ ...draft, format: event.target.value as SubsetFormat })
              }
            >
              {formats.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.label}
                </option>
              ))}
            </select>
          </Field>
          {status}
        </>
      )}
    </fieldset>
  );
}

/** "Use the search's shape" (or box): the area the reader searched by, one click away. */
function SearchAreaOffer({
  area,
  draft,
  onChange,
}: {
  area: SearchArea;
  draft: SubsetDraft;
  onChange: (draft: SubsetDraft) => void;
}) {
  const use = () => {
    if (area.shape) {
      onChange({ ...draft, shape: area.shape });
      return;
    }
    const [west, south, east, north] = (area.bbox ?? []).map(String);
    onChange({
      ...draft,
      shape: null,
      box: { west: west ?? '', south: south ?? '', east: east ?? '', north: north ?? '' },
    });
  };
  return (
    <p className="subset-choices__offer">
      <button type="button" className="button button--quiet button--small" onClick={use}>
        {area.shape ? "Use the search's shape" : "Use the search's box"}
      </button>
      <span className="hint">
        {area.shape ? describeShape(area.shape) : (area.bbox ?? []).join(', ')}
      </span>
    </p>
  );
}
