import { apiFetch } from '../client';
import type { StageRequest } from '../types';

/** POST /api/v1/stage-requests/{id}/cancel/: every file not yet staged is cancelled. */
export function cancelStageRequest(id: string) {
  return apiFetch<StageRequest>(`/api/v1/stage-requests/${id}/cancel/`, { method: 'POST' });
}
