import { apiFetch } from '../client';
import type { ApplyResult } from '../types';

/** POST /api/v1/subscriptions/{id}/apply/: deliver what was archived since `since` and matches. */
export function applySubscription(id: number, since: string) {
  return apiFetch<ApplyResult>(`/api/v1/subscriptions/${id}/apply/`, {
    method: 'POST',
    json: { since },
  });
}
