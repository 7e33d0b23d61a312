import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import type { QueryParams } from '../client';
import type { GranuleSearchPage } from '../types';
import { granuleKeys } from './keys';
import { searchFetch } from './searchRequest';

/** What the search page asks for with its page of results, in the same request. */
export const SEARCH_INCLUDE = 'facets,timeline';

/**
 * The search page's one request: GET /api/v1/granules/?include=facets,timeline (a POST to
 * /api/v1/granules/search/ with a shape) answers a page of the search with its facets (counted
 * as /granules/facets/ does: without the collection, level, platform and instrument filters)
 * and its timeline (as /granules/timeline/ with bucket auto), where it took three requests.
 * A later page (a cursor) is asked alone: its filters are the first page's, so are its facets
 * and timeline (searchSummaryQuery keeps them).
 */
export function granuleSearchQuery(params: QueryParams) {
  return queryOptions({
    queryKey: granuleKeys.search(params),
    queryFn: ({ signal }) =>
      searchFetch<GranuleSearchPage>(
        '/api/v1/granules/',
        '/api/v1/granules/search/',
        params.cursor ? params : { ...params, include: SEARCH_INCLUDE },
        signal,
      ),
    placeholderData: keepPreviousData,
  });
}

/**
 * The facets and timeline of a later page's search: its first page, as the search page asked
 * it before moving on (so no request), or asked once when a later page's address is opened.
 * Kept as long as the page is open: counting the search again for each page cost the server a
 * search each time, and a page's summary never refreshed while it was read either.
 */
export function searchSummaryQuery(params: QueryParams) {
  return queryOptions({
    ...granuleSearchQuery({ ...params, cursor: null }),
    staleTime: Infinity,
  });
}
