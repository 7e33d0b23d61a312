import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { ArchiveRequest, BulkAction, BulkResult, Page } from '../types';
import { archiveKeys } from './keys';

/** GET /api/v1/archive/requests/?state=…&kind=… (first page, newest cursor order). */
export function archiveRequestsQuery(state: string, kind = '') {
  return queryOptions({
    queryKey: archiveKeys.requests({ state, kind }),
    queryFn: ({ signal }) =>
      apiFetch<Page<ArchiveRequest>>('/api/v1/archive/requests/', {
        params: { state, kind, limit: 200 },
        signal,
      }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

/** POST /api/v1/archive/requests/bulk/: retry failed or cancel queued requests. */
export function bulkRequests(body: BulkAction) {
  return apiFetch<BulkResult>('/api/v1/archive/requests/bulk/', { method: 'POST', json: body });
}
