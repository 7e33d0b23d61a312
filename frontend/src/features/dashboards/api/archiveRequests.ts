import { queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';
import { LIVE_REFRESH_MS } from './metrics';

export type RequestKind = 'migrate' | 'recall' | 'repack' | 'audit';

export interface ArchiveRequest {
  id: number;
  kind: string;
  state: string;
  priority: number;
  file: number | null;
  file_name: string | null;
  copy_number: number | null;
  volume_group: string | null;
  volume: string | null;
  drive: string | null;
  bytes_total: number;
  bytes_done: number;
  percent_done: number;
  attempts: number;
  error: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** GET /api/v1/archive/requests/?state=…&kind=… (first page, newest cursor order). */
export function archiveRequestsQuery(state: string, kind = '') {
  return queryOptions({
    queryKey: ['archive', 'requests', { state, kind }] as const,
    queryFn: ({ signal }) =>
      apiFetch<Page<ArchiveRequest>>('/api/v1/archive/requests/', {
        params: { state, kind, limit: 200 },
        signal,
      }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

export interface BulkAction {
  action: 'retry' | 'cancel';
  ids?: number[];
  kind?: string;
  all?: boolean;
}

/** POST /api/v1/archive/requests/bulk/: retry failed or cancel queued requests. */
export function bulkRequests(body: BulkAction) {
  return apiFetch<{ action: string; count: number }>('/api/v1/archive/requests/bulk/', {
    method: 'POST',
    json: body,
  });
}
