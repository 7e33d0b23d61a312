import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import type { QueryParams } from '../client';
import type { Granule, Page } from '../types';
import { granuleKeys } from './keys';
import { searchFetch } from './searchRequest';

/**
 * GET /api/v1/granules/ with the search's query parameters (see searchState.ts), or POST
 * /api/v1/granules/search/ when the search has a shape.
 */
export function granulesQuery(params: QueryParams, enabled = true) {
  return queryOptions({
    queryKey: granuleKeys.list(params),
    queryFn: ({ signal }) =>
      searchFetch<Page<Granule>>('/api/v1/granules/', '/api/v1/granules/search/', params, signal),
    placeholderData: keepPreviousData,
    enabled,
  });
}
