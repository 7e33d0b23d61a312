import { queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';
import { LIVE_REFRESH_MS } from './metrics';

export interface IngestRequest {
  id: number;
  url: string;
  provider: string;
  way: string;
  label: string;
  state: string;
  granule_count: number;
  archived_count: number;
  failed_count: number;
  bytes_total: number;
  bytes_done: number;
  percent_done: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface IngestGranuleRow {
  position: number;
  collection: string;
  granule_id: string;
  state: string;
  disposition: string;
  reason: string;
  attempts: number;
  updated_at: string;
}

export interface IngestRequestDetail extends IngestRequest {
  counts: Record<string, number>;
  granules?: IngestGranuleRow[];
}

/** GET /api/v1/ingest/requests/ (newest first; operators see every provider's). */
export function ingestRequestsQuery() {
  return queryOptions({
    queryKey: ['ingest', 'requests'] as const,
    queryFn: ({ signal }) =>
      apiFetch<Page<IngestRequest>>('/api/v1/ingest/requests/', { params: { limit: 200 }, signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

/** GET /api/v1/ingest/requests/{id}/?state=failed: the failed granules and their reasons. */
export function failedGranulesQuery(id: number) {
  return queryOptions({
    queryKey: ['ingest', 'requests', id, 'failed'] as const,
    queryFn: ({ signal }) =>
      apiFetch<IngestRequestDetail>(`/api/v1/ingest/requests/${id}/`, {
        params: { state: 'failed' },
        signal,
      }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

/** POST /api/v1/ingest/requests/{id}/retry/: every failed granule, or those at `positions`. */
export function retryIngest(id: number, positions?: number[]) {
  return apiFetch<IngestRequest & { retried: number }>(`/api/v1/ingest/requests/${id}/retry/`, {
    method: 'POST',
    json: positions ? { positions } : {},
  });
}
