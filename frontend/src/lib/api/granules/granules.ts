import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch, type QueryParams } from '../client';
import type { Granule, Page } from '../types';
import { granuleKeys } from './keys';

/** GET /api/v1/granules/ with the search's query parameters (see searchState.ts). */
export function granulesQuery(params: QueryParams, enabled = true) {
  return queryOptions({
    queryKey: granuleKeys.list(params),
    queryFn: ({ signal }) => apiFetch<Page<Granule>>('/api/v1/granules/', { params, signal }),
    placeholderData: keepPreviousData,
    enabled,
  });
}
