/**
 * A search shape (a GeoJSON geometry) in a page's address, so a search by a drawn polygon or an
 * uploaded shape survives a reload and can be shared. Small shapes go in the address as compact
 * JSON; a large one (an uploaded outline of up to 2,000 vertices) would make an address longer
 * than web servers accept, so it is kept in this browser's storage and the address names it.
 * Shared by the search page and the subscription form (which carries a search's shape).
 */
import type { Geometry } from 'geojson';

export type { Geometry } from 'geojson';

/** Longest shape written into the address itself (the rest of the search needs room too). */
export const MAX_INLINE = 1800;
const SAVED = 'saved:';
const STORAGE_PREFIX = 'granary.shape.';

const TYPES = new Set([
  'Point',
  'MultiPoint',
  'LineString',
  'MultiLineString',
  'Polygon',
  'MultiPolygon',
  'GeometryCollection',
]);

/** Positions to 1e-5 degree (about a metre): shorter addresses, nothing a search would miss. */
function rounded(value: unknown): unknown {
  if (typeof value === 'number') return Math.round(value * 1e5) / 1e5;
  if (Array.isArray(value)) return value.map(rounded);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v)]));
  return value;
}

/** A short stable name for a text (FNV-1a, 32 bits, with the length). */
function digest(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `${(hash >>> 0).toString(16).padStart(8, '0')}${text.length.toString(16)}`;
}

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** True for what looks like a GeoJSON geometry (the server checks the rest and says why). */
export function isGeometry(value: unknown): value is Geometry {
  if (!value || typeof value !== 'object') return false;
  const { type, coordinates, geometries } = value as Record<string, unknown>;
  if (typeof type !== 'string' || !TYPES.has(type)) return false;
  return type === 'GeometryCollection' ? Array.isArray(geometries) : Array.isArray(coordinates);
}

/** The address value for `shape`: compact JSON, or a name for it kept in this browser. */
export function writeShape(shape: Geometry): string {
  const text = JSON.stringify(rounded(shape));
  if (text.length <= MAX_INLINE) return text;
  const name = digest(text);
  storage()?.setItem(`${STORAGE_PREFIX}${name}`, text);
  return `${SAVED}${name}`;
}

export type ShapeReading =
  | { shape: Geometry; missing: false }
  /** The address names a shape kept in another browser (or storage was cleared). */
  | { shape: null; missing: boolean };

/** The shape an address value stands for. */
export function readShape(text: string | null): ShapeReading {
  if (!text) return { shape: null, missing: false };
  let json: string | null = text;
  if (text.startsWith(SAVED))
    json = storage()?.getItem(`${STORAGE_PREFIX}${text.slice(6)}`) ?? null;
  if (json === null) return { shape: null, missing: true };
  try {
    const value: unknown = JSON.parse(json);
    return isGeometry(value) ? { shape: value, missing: false } : { shape: null, missing: true };
  } catch {
    return { shape: null, missing: true };
  }
}

/** In words, for buttons and summaries: "a polygon of 5 vertices", "a point"... */
export function describeShape(shape: Geometry): string {
  if (shape.type === 'Point') {
    const [lng, lat] = shape.coordinates;
    return `the point ${lat}, ${lng}`;
  }
  if (shape.type === 'Polygon') return `a polygon of ${shape.coordinates[0]!.length - 1} vertices`;
  if (shape.type === 'MultiPolygon') {
    const count = shape.coordinates.length;
    // A polygon across 180° arrives cut there (RFC 7946), its parts at both edges of the map.
    const xs = new Set(shape.coordinates.flatMap((polygon) => polygon[0]!.map(([x]) => x)));
    return xs.has(180) && xs.has(-180)
      ? `a polygon cut at the antimeridian into ${count} parts`
      : `${count} polygons`;
  }
  return `a ${shape.type} shape`;
}
