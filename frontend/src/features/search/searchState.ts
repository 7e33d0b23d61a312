/**
 * The granule search as it lives in the page's address, so a search can be bookmarked, shared
 * and reloaded: parsing, writing back, and the API parameters it stands for. Plain functions,
 * no React, so the mapping can be read and tested on its own.
 */
import type { QueryParams } from '../../lib/api/client';
import type { BBox } from '../../lib/api/types';
import { formatBBox } from '../../lib/format';

export type DayNight = '' | 'Day' | 'Night';

export interface SearchState {
  /** Free text over the collections. */
  q: string;
  processingLevel: string;
  platform: string;
  instrument: string;
  /** Collection keys chosen in the list; none means every collection the other filters allow. */
  collections: string[];
  /** UTC days (yyyy-mm-dd): granules overlapping [start, end]. */
  start: string;
  end: string;
  bbox: BBox | null;
  dayNight: DayNight;
  /** Cloud cover below this percentage, as typed. */
  cloudBelow: string;
  /** Opaque cursor of the results page. */
  cursor: string | null;
}

export const PAGE_SIZE = 20;

export const emptySearch: SearchState = {
  q: '',
  processingLevel: '',
  platform: '',
  instrument: '',
  collections: [],
  start: '',
  end: '',
  bbox: null,
  dayNight: '',
  cloudBelow: '',
  cursor: null,
};

/** Names in the address; short, readable and stable, since people share these links. */
const KEYS = {
  q: 'q',
  processingLevel: 'level',
  platform: 'platform',
  instrument: 'instrument',
  collections: 'collection',
  start: 'start',
  end: 'end',
  bbox: 'bbox',
  dayNight: 'day_night',
  cloudBelow: 'cloud_below',
  cursor: 'cursor',
} as const;

/** "w,s,e,n" with four finite numbers, or null. */
export function parseBBox(text: string | null): BBox | null {
  if (!text) return null;
  const parts = text.split(',').map((part) => Number(part.trim()));
  if (parts.length !== 4 || parts.some((n) => !Number.isFinite(n))) return null;
  return parts as BBox;
}

export function readSearch(params: URLSearchParams): SearchState {
  const text = (key: string) => (params.get(key) ?? '').trim();
  const dayNight = text(KEYS.dayNight);
  return {
    q: text(KEYS.q),
    processingLevel: text(KEYS.processingLevel),
    platform: text(KEYS.platform),
    instrument: text(KEYS.instrument),
    collections: text(KEYS.collections)
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean),
    start: text(KEYS.start),
    end: text(KEYS.end),
    bbox: parseBBox(params.get(KEYS.bbox)),
    dayNight: dayNight === 'Day' || dayNight === 'Night' ? dayNight : '',
    cloudBelow: text(KEYS.cloudBelow),
    cursor: params.get(KEYS.cursor) || null,
  };
}

/** The address for `state`; empty values are left out so shared links stay short. */
export function writeSearch(state: SearchState): URLSearchParams {
  const params = new URLSearchParams();
  const put = (key: string, value: string) => {
    if (value.trim()) params.set(key, value.trim());
  };
  put(KEYS.q, state.q);
  put(KEYS.processingLevel, state.processingLevel);
  put(KEYS.platform, state.platform);
  put(KEYS.instrument, state.instrument);
  put(KEYS.collections, state.collections.join(','));
  put(KEYS.start, state.start);
  put(KEYS.end, state.end);
  if (state.bbox) put(KEYS.bbox, formatBBox(state.bbox));
  put(KEYS.dayNight, state.dayNight);
  put(KEYS.cloudBelow, state.cloudBelow);
  if (state.cursor) params.set(KEYS.cursor, state.cursor);
  return params;
}

/** The filters every granule query shares (list and facets), in the API's names. */
function filterParams(state: SearchState): QueryParams {
  return {
    start: state.start,
    end: state.end,
    bbox: state.bbox ? formatBBox(state.bbox) : '',
    'attr.day_night': state.dayNight,
    'attr.cloud_cover.lt': state.cloudBelow,
  };
}

/**
 * GET /api/v1/granules/ parameters. `matchingKeys` are the collections the free text and the
 * facets leave (null while unknown or when nothing narrows the collections); chosen collections
 * win over them.
 */
export function granuleParams(state: SearchState, matchingKeys: string[] | null): QueryParams {
  const keys = state.collections.length ? state.collections : (matchingKeys ?? []);
  return {
    ...filterParams(state),
    collection: keys.join(','),
    processing_level: state.processingLevel,
    platform: state.platform,
    instrument: state.instrument,
    cursor: state.cursor,
    limit: PAGE_SIZE,
  };
}

/**
 * GET /api/v1/granules/facets/ parameters: time, space and attributes only, so every level,
 * platform, instrument and collection stays offered with the number of granules it would give.
 */
export function facetParams(state: SearchState): QueryParams {
  return filterParams(state);
}

/** True when the free text or a facet narrows which collections are searched. */
export function narrowsCollections(state: SearchState): boolean {
  return Boolean(state.q || state.processingLevel || state.platform || state.instrument);
}
