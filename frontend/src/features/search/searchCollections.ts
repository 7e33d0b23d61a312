import { useQuery, type UseQueryResult } from '@tanstack/react-query';

import { collectionsQuery } from '../../lib/api/collections/collections';
import type { Collection, Page } from '../../lib/api/types';
import type { SearchState } from './searchState';

/** Most collections the facets list in the form. */
export const COLLECTION_LIMIT = 100;
/** The form shows keys and titles (the counts come with the search), which change when an
 * operator adds a collection: a few minutes old is fresh enough, and a new search, a page of
 * results or coming back from a granule asks nothing. */
const COLLECTIONS_FRESH_MS = 5 * 60_000;

type Narrowing = Pick<SearchState, 'processingLevel' | 'platform' | 'instrument'>;

/** The collections of `all` that the API's collection filters would answer: the level as
 * written, platform and instrument in any case, an empty filter ignored. */
export function narrowCollections(all: Page<Collection>, by: Narrowing): Page<Collection> {
  const same = (wanted: string, value: string | null | undefined) =>
    !wanted || (value ?? '').toLowerCase() === wanted.toLowerCase();
  const results = all.results.filter(
    (c) =>
      (!by.processingLevel || c.processing_level === by.processingLevel) &&
      same(by.platform, c.platform) &&
      same(by.instrument, c.instrument),
  );
  return results.length === all.results.length ? all : { ...all, results };
}

/** The search form's collections: every collection, asked once and narrowed here by level,
 * platform and instrument; only when they do not fit in one page does a narrowed search ask
 * the API for its own list. */
export function useSearchCollections(search: Narrowing): UseQueryResult<Page<Collection>> {
  const all = useQuery({
    ...collectionsQuery({ limit: COLLECTION_LIMIT }),
    staleTime: COLLECTIONS_FRESH_MS,
    select: (page: Page<Collection>) => (page.next ? page : narrowCollections(page, search)),
  });
  const narrowed = Boolean(search.processingLevel || search.platform || search.instrument);
  const partial = all.data?.next != null;
  const asked = useQuery({
    ...collectionsQuery({
      processing_level: search.processingLevel,
      platform: search.platform,
      instrument: search.instrument,
      limit: COLLECTION_LIMIT,
    }),
    staleTime: COLLECTIONS_FRESH_MS,
    enabled: narrowed && partial,
  });
  return narrowed && partial ? asked : all;
}
