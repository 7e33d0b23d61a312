/**
 * The granule search as it lives in the page's address, so a search can be bookmarked, shared
 * and reloaded: parsing, writing back, and the API parameters it stands for. Plain functions,
 * no React, so the mapping can be read and tested on its own.
 */
import type { QueryParams } from '../../lib/api/client';
import type { BBox } from '../../lib/api/types';
import { formatBBox } from '../../lib/format';
import { readShape, writeShape, type Geometry } from '../../lib/shapeParam';

export type DayNight = '' | 'Day' | 'Night';

export interface SearchState {
  /** Free text: granule ids (with * and ? wildcards) or words of a collection's description. */
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
  /** A drawn polygon or point, or an uploaded outline; replaces the box when set. */
  shape: Geometry | null;
  dayNight: DayNight;
  /** Cloud cover below this percentage, as typed. */
  cloudBelow: string;
  /** The API's `ordering`, one of SORTS. */
  sort: Sort;
  /** Granules per results page, one of PAGE_SIZES. */
  pageSize: number;
  /** Opaque cursor of the results page. */
  cursor: string | null;
}

/** Orders offered, by the API's `ordering` value; newest first by default, as the API does. */
export const SORTS = [
  { value: '-temporal_start', label: 'Time, newest first' },
  { value: 'temporal_start', label: 'Time, oldest first' },
  { value: 'granule_id', label: 'Name, A to Z' },
  { value: '-granule_id', label: 'Name, Z to A' },
] as const;
export type Sort = (typeof SORTS)[number]['value'];
export const DEFAULT_SORT: Sort = '-temporal_start';

export const PAGE_SIZES = [20, 50, 100, 200] as const;
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
  shape: null,
  dayNight: '',
  cloudBelow: '',
  sort: DEFAULT_SORT,
  pageSize: PAGE_SIZE,
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
  shape: 'shape',
  dayNight: 'day_night',
  cloudBelow: 'cloud_below',
  sort: 'sort',
  pageSize: 'per_page',
  cursor: 'cursor',
} as const;

/** "w,s,e,n" with four finite numbers, or null. */
export function parseBBox(text: string | null): BBox | null {
  if (!text) return null;
  const parts = text.split(',').map((part) => Number(part.trim()));
  if (parts.length !== 4 || parts.some((n) => !Number.isFinite(n))) return null;
  return parts as BBox;
}

function sortOf(text: string): Sort {
  return SORTS.find((sort) => sort.value === text)?.value ?? DEFAULT_SORT;
}

function pageSizeOf(text: string): number {
  return PAGE_SIZES.find((size) => String(size) === text) ?? PAGE_SIZE;
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
    shape: readShape(params.get(KEYS.shape)).shape,
    dayNight: dayNight === 'Day' || dayNight === 'Night' ? dayNight : '',
    cloudBelow: text(KEYS.cloudBelow),
    sort: sortOf(text(KEYS.sort)),
    pageSize: pageSizeOf(text(KEYS.pageSize)),
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
  if (state.shape) put(KEYS.shape, writeShape(state.shape));
  else if (state.bbox) put(KEYS.bbox, formatBBox(state.bbox));
  put(KEYS.dayNight, state.dayNight);
  put(KEYS.cloudBelow, state.cloudBelow);
  if (state.sort !== DEFAULT_SORT) put(KEYS.sort, state.sort);
  if (state.pageSize !== PAGE_SIZE) put(KEYS.pageSize, String(state.pageSize));
  if (state.cursor) params.set(KEYS.cursor, state.cursor);
  return params;
}

/** The filters every granule query shares (list and facets), in the API's names. */
function filterParams(state: SearchState): Record<string, string> {
  return {
    start: state.start,
    end: state.end,
    // The API takes one of the two; a shape replaces the box.
    bbox: state.bbox && !state.shape ? formatBBox(state.bbox) : '',
    intersects: state.shape ? JSON.stringify(state.shape) : '',
    'attr.day_night': state.dayNight,
    'attr.cloud_cover.lt': state.cloudBelow,
  };
}

/**
 * Which granules the search selects, in the list's parameter names: what the timeline and
 * "add all matching to the cart" are asked about. Empty values are left out. (The facets the
 * API counts with the page leave out collection, processing_level, platform and instrument,
 * so every value stays on offer with the number it would give.)
 */
export function matchingFilters(state: SearchState): Record<string, string> {
  const filters: Record<string, string> = {
    q: state.q,
    ...filterParams(state),
    collection: state.collections.join(','),
    processing_level: state.processingLevel,
    platform: state.platform,
    instrument: state.instrument,
  };
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value.trim() !== ''));
}

/** GET /api/v1/granules/ parameters: the matching filters, one page of them in order. */
export function granuleParams(state: SearchState): QueryParams {
  return {
    ...matchingFilters(state),
    ordering: state.sort === DEFAULT_SORT ? '' : state.sort,
    cursor: state.cursor,
    limit: state.pageSize,
  };
}

/** A word that reads as (the start of) a granule id: no wildcard, a digit or an id separator. */
function idLike(word: string): boolean {
  return !/[*?]/.test(word) && /[0-9._]/.test(word);
}

/**
 * The free text with `*` after each id-like word, to offer when the search found nothing: an
 * id is matched whole unless it has a wildcard, so a typed prefix finds nothing. Null when no
 * word reads as an id.
 */
export function wildcardSuggestion(q: string): string | null {
  const words = q.split(/\s+/).filter(Boolean);
  if (!words.some(idLike)) return null;
  return words.map((word) => (idLike(word) ? `${word}*` : word)).join(' ');
}
