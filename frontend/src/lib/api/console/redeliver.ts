import { apiFetch } from '../client';
import type { ConsoleGranulePage, RedeliverGroupResult } from '../types';

/**
 * POST /api/v1/console/granules/ID/redeliver/: give up a granule whose only copy of a file is
 * damaged and ask its provider to deliver it again. Answers the granule's page after it.
 */
export function redeliverGranule(id: number, reason: string) {
  return apiFetch<ConsoleGranulePage>(`/api/v1/console/granules/${id}/redeliver/`, {
    method: 'POST',
    json: { reason },
  });
}

/** POST /api/v1/console/failures/groups/redeliver/: the same for every granule of a group. */
export function redeliverGroup(key: string, reason: string) {
  return apiFetch<RedeliverGroupResult>('/api/v1/console/failures/groups/redeliver/', {
    method: 'POST',
    json: { key, reason },
  });
}
