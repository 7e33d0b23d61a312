import { apiFetch } from '../../../lib/api';

/** POST /api/v1/subscriptions/{id}/apply/: deliver what was archived since `since` and matches. */
export function applySubscription(id: number, since: string) {
  return apiFetch<{ detail: string; since: string }>(`/api/v1/subscriptions/${id}/apply/`, {
    method: 'POST',
    json: { since },
  });
}
