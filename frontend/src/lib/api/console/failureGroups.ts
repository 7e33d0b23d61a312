import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { FailureGroup } from '../types';
import { consoleKeys, type FailureGroupFilters } from './keys';

/** GET /api/v1/console/failures/groups/: failed work grouped by reason, the largest first. */
export function failureGroupsQuery(filters: FailureGroupFilters = {}) {
  return queryOptions({
    queryKey: consoleKeys.failureGroups(filters),
    queryFn: ({ signal }) =>
      apiFetch<FailureGroup[]>('/api/v1/console/failures/groups/', {
        params: { ...filters },
        signal,
      }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
