import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { Today } from '../types';
import { metricKeys } from './keys';

/** GET /api/v1/metrics/today/: bytes so far, rate and projection against the targets. */
export function todayQuery() {
  return queryOptions({
    queryKey: metricKeys.today(),
    queryFn: ({ signal }) => apiFetch<Today>('/api/v1/metrics/today/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
