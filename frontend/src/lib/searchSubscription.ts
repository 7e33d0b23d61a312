/**
 * A granule search, as its address encodes it (features/search/searchState.ts), turned into a
 * subscription's draft: "subscribe to this search". Kept in lib/ because two features share it:
 * the search page links with it, the new-subscription page reads it. The address names are the
 * search's public, shared-link names, so they are stable.
 */
import type { BBox } from './api/types';
import { readShape, type Geometry } from './shapeParam';

/** What a search carries over to a subscription. */
export interface SearchDraft {
  /** Collections chosen in the search; empty when the search left them to its filters. */
  collections: string[];
  /** UTC days yyyy-mm-dd, or ''. */
  start: string;
  end: string;
  bbox: BBox | null;
  /** The search's drawn or uploaded shape (it replaces the box), or null. */
  shape: Geometry | null;
  dayNight: '' | 'Day' | 'Night';
  /** Cloud cover below this percentage, as typed, or ''. */
  cloudBelow: string;
  /**
   * The free text and facets that chose the collections (a subscription names its collections,
   * so these are resolved to collection keys when no collection was picked by hand).
   */
  collectionFilter: { q: string; processing_level: string; platform: string; instrument: string };
}

/** The search's address names that a subscription can use (its cursor is not one of them). */
const CARRIED = [
  'q',
  'level',
  'platform',
  'instrument',
  'collection',
  'start',
  'end',
  'bbox',
  'shape',
  'day_night',
  'cloud_below',
] as const;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function parseBBox(text: string): BBox | null {
  const parts = text.split(',').map((part) => Number(part.trim()));
  if (parts.length !== 4 || parts.some((n) => !Number.isFinite(n))) return null;
  return parts as BBox;
}

/** Where "Subscribe to this search" goes: the new-subscription page with the search's filters. */
export function subscribeToSearchPath(search: URLSearchParams): string {
  const carried = new URLSearchParams();
  for (const key of CARRIED) {
    const value = search.get(key)?.trim();
    if (value) carried.set(key, value);
  }
  const query = carried.toString();
  return `/subscriptions/new${query ? `?${query}` : ''}`;
}

/** The draft a new-subscription address carries; null when it carries no search at all. */
export function readSearchDraft(params: URLSearchParams): SearchDraft | null {
  if (!CARRIED.some((key) => params.get(key)?.trim())) return null;
  const text = (key: (typeof CARRIED)[number]) => (params.get(key) ?? '').trim();
  const dayNight = text('day_night');
  const day = (key: 'start' | 'end') => (DAY.test(text(key)) ? text(key) : '');
  return {
    collections: text('collection')
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean),
    start: day('start'),
    end: day('end'),
    bbox: parseBBox(text('bbox')),
    shape: readShape(text('shape')).shape,
    dayNight: dayNight === 'Day' || dayNight === 'Night' ? dayNight : '',
    cloudBelow: text('cloud_below'),
    collectionFilter: {
      q: text('q'),
      processing_level: text('level'),
      platform: text('platform'),
      instrument: text('instrument'),
    },
  };
}

/** True when the search left its collections to free text or facets. */
export function needsCollectionLookup(draft: SearchDraft): boolean {
  const filter = draft.collectionFilter;
  return (
    draft.collections.length === 0 &&
    Boolean(filter.q || filter.processing_level || filter.platform || filter.instrument)
  );
}
