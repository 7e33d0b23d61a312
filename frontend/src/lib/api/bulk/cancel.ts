import { apiFetch } from '../client';
import type { BulkJob } from '../types';

/** POST /api/v1/console/bulk/ID/cancel/: stop a job; items not started are cancelled. */
export function cancelBulkJob(id: number, reason = '') {
  return apiFetch<BulkJob>(`/api/v1/console/bulk/${id}/cancel/`, {
    method: 'POST',
    json: { reason },
  });
}
