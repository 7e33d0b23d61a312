import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import { LIVE_REFRESH_MS } from './metrics';

/** One row of GET /api/v1/archive/queues/: pending work of one kind for one volume group. */
export interface QueueRow {
  kind: string;
  volume_group: string | null;
  queued: number;
  queued_bytes: number;
  running: number;
  running_bytes: number;
  running_done_bytes: number;
  oldest_at: string | null;
  oldest_age_s: number | null;
  running_percent_done: number | null;
}

export function queuesQuery() {
  return queryOptions({
    queryKey: ['archive', 'queues'] as const,
    queryFn: ({ signal }) => apiFetch<QueueRow[]>('/api/v1/archive/queues/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
