import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch, type QueryParams } from '../client';
import type { GranuleFacets } from '../types';
import { granuleKeys } from './keys';

/** GET /api/v1/granules/facets/: granule counts per value for what the other filters select. */
export function granuleFacetsQuery(params: QueryParams) {
  return queryOptions({
    queryKey: granuleKeys.facets(params),
    queryFn: ({ signal }) =>
      apiFetch<GranuleFacets>('/api/v1/granules/facets/', { params, signal }),
    placeholderData: keepPreviousData,
  });
}
