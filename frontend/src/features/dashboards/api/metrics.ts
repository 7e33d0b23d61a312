import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

/** Live figures refresh at most every 10 s. */
export const LIVE_REFRESH_MS = 10_000;

export type ChartedDirection = 'ingest' | 'distribution';
export type Direction = ChartedDirection | 'migrate' | 'recall';

export interface TodayDirection {
  bytes: number;
  rate_b_s: number;
  projected_bytes: number;
  target_bytes: number;
  surplus_bytes: number;
  percent_of_target: number | null;
}

/** GET /api/v1/metrics/today/ */
export interface Today {
  date: string;
  now: string;
  seconds_left: number;
  directions: Record<ChartedDirection, TodayDirection>;
}

export function todayQuery() {
  return queryOptions({
    queryKey: ['metrics', 'today'] as const,
    queryFn: ({ signal }) => apiFetch<Today>('/api/v1/metrics/today/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
