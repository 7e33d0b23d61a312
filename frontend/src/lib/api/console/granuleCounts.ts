import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { GranuleStateCounts } from '../types';
import { consoleKeys, type GranuleFilters } from './keys';

/** GET /api/v1/console/granules/counts/: granules per state for the filter (its state aside). */
export function consoleGranuleCountsQuery(filters: GranuleFilters) {
  return queryOptions({
    queryKey: consoleKeys.granuleCounts(filters),
    queryFn: ({ signal }) =>
      apiFetch<GranuleStateCounts>('/api/v1/console/granules/counts/', {
        params: { ...filters, state: undefined },
        signal,
      }),
  });
}
