import { apiFetch } from '../client';
import type { RetryResult } from '../types';

/** POST /api/v1/ingest/requests/{id}/retry/: every failed granule, or those at `positions`. */
export function retryIngest(id: number, positions?: number[]) {
  return apiFetch<RetryResult>(`/api/v1/ingest/requests/${id}/retry/`, {
    method: 'POST',
    json: positions ? { positions } : {},
  });
}
