import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { Throughput } from '../types';
import { metricKeys } from './keys';

/** GET /api/v1/metrics/throughput/?hours=N: MB/s per hour (UTC hour starts). */
export function throughputQuery(hours = 48) {
  return queryOptions({
    queryKey: metricKeys.throughput(hours),
    queryFn: ({ signal }) =>
      apiFetch<Throughput>('/api/v1/metrics/throughput/', { params: { hours }, signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
