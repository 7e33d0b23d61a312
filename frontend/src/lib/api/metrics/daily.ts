import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { Daily } from '../types';
import { metricKeys } from './keys';

/** GET /api/v1/metrics/daily/?days=N: bytes per UTC day and the targets in bytes. */
export function dailyQuery(days = 30) {
  return queryOptions({
    queryKey: metricKeys.daily(days),
    queryFn: ({ signal }) =>
      apiFetch<Daily>('/api/v1/metrics/daily/', { params: { days }, signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
