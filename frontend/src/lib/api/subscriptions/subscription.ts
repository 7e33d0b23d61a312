import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Subscription, SubscriptionChange } from '../types';
import { subscriptionKeys } from './keys';

/** GET /api/v1/subscriptions/{id}/ */
export function subscriptionQuery(id: number) {
  return queryOptions({
    queryKey: subscriptionKeys.detail(id),
    queryFn: ({ signal }) => apiFetch<Subscription>(`/api/v1/subscriptions/${id}/`, { signal }),
  });
}

/** PATCH /api/v1/subscriptions/{id}/: edit the filter, or pause and resume with {active}. */
export function updateSubscription(id: number, body: SubscriptionChange) {
  return apiFetch<Subscription>(`/api/v1/subscriptions/${id}/`, { method: 'PATCH', json: body });
}

/** DELETE /api/v1/subscriptions/{id}/ (its standing order goes with it). */
export function deleteSubscription(id: number) {
  return apiFetch<void>(`/api/v1/subscriptions/${id}/`, { method: 'DELETE' });
}
