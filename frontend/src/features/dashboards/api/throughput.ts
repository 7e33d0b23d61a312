import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import { LIVE_REFRESH_MS } from './metrics';

/** GET /api/v1/metrics/throughput/?hours=N: MB/s per hour (UTC hour starts). */
export interface Throughput {
  hours: string[];
  by_direction: Record<string, number[]>;
  by_collection: Record<string, number[]>;
}

export function throughputQuery(hours = 48) {
  return queryOptions({
    queryKey: ['metrics', 'throughput', hours] as const,
    queryFn: ({ signal }) =>
      apiFetch<Throughput>('/api/v1/metrics/throughput/', { params: { hours }, signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
