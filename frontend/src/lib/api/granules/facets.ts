import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import type { QueryParams } from '../client';
import type { GranuleFacets } from '../types';
import { granuleKeys } from './keys';
import { searchFetch } from './searchRequest';

/**
 * GET /api/v1/granules/facets/ (a POST with a shape): granule counts per value for what the
 * other filters select.
 */
export function granuleFacetsQuery(params: QueryParams) {
  return queryOptions({
    queryKey: granuleKeys.facets(params),
    queryFn: ({ signal }) => {
      const path = '/api/v1/granules/facets/';
      return searchFetch<GranuleFacets>(path, path, params, signal);
    },
    placeholderData: keepPreviousData,
  });
}
