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
 */
export function granuleSearchQuery(params: QueryParams) {
  return queryOptions({
    queryKey: granuleKeys.search(params),
    queryFn: ({ signal }) =>
      searchFetch<GranuleSearchPage>(
        '/api/v1/granules/',
        '/api/v1/granules/search/',
        { ...params, include: SEARCH_INCLUDE },
        signal,
      ),
    placeholderData: keepPreviousData,
  });
}
