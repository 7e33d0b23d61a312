import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { QueueRow } from '../types';
import { archiveKeys } from './keys';

/** GET /api/v1/archive/queues/: pending work per kind and volume group. */
export function queuesQuery() {
  return queryOptions({
    queryKey: archiveKeys.queues(),
    queryFn: ({ signal }) => apiFetch<QueueRow[]>('/api/v1/archive/queues/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
