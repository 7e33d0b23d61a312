import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { BulkJobDetail } from '../types';
import { bulkKeys } from './keys';

/** GET /api/v1/console/bulk/ID/: one job's progress (and why items were skipped or failed,
 * grouped), refreshed while it runs. */
export function bulkJobQuery(id: number) {
  return queryOptions({
    queryKey: bulkKeys.job(id),
    queryFn: ({ signal }) => apiFetch<BulkJobDetail>(`/api/v1/console/bulk/${id}/`, { signal }),
    refetchInterval: (query) =>
      query.state.data && !['queued', 'running'].includes(query.state.data.state)
        ? false
        : LIVE_REFRESH_MS / 2,
  });
}
