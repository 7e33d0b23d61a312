import { apiFetch } from '../client';
import type { StagePriority, StageRequest } from '../types';

/** POST /api/v1/stage-requests/{id}/priority/ (operators): its queued recalls move too. */
export function setStagePriority(id: string, priority: StagePriority) {
  return apiFetch<StageRequest>(`/api/v1/stage-requests/${id}/priority/`, {
    method: 'POST',
    json: { priority },
  });
}
