import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import { LIVE_REFRESH_MS, type ChartedDirection } from './metrics';

export interface DailyRow {
  date: string;
  ingest: number;
  distribution: number;
}

/** GET /api/v1/metrics/daily/?days=N: bytes per UTC day and the targets in bytes. */
export interface Daily {
  targets: Record<ChartedDirection, number>;
  days: DailyRow[];
}

export function dailyQuery(days = 30) {
  return queryOptions({
    queryKey: ['metrics', 'daily', days] as const,
    queryFn: ({ signal }) => apiFetch<Daily>('/api/v1/metrics/daily/', { params: { days }, signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
