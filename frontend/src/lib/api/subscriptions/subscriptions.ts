import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { DeliveryMode, Page, Subscription, SubscriptionBody } from '../types';
import { subscriptionKeys } from './keys';

export const MODE_LABELS: Record<DeliveryMode, string> = {
  notify: 'Notify me by email',
  push: 'Push into a destination (folder or SFTP)',
  order: 'Add to a standing order (HTTPS links)',
};

/** GET /api/v1/subscriptions/: the caller's subscriptions, newest first. */
export function subscriptionsQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: subscriptionKeys.list(cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<Subscription>>('/api/v1/subscriptions/', { params: { cursor }, signal }),
  });
}

/** POST /api/v1/subscriptions/ */
export function createSubscription(body: SubscriptionBody) {
  return apiFetch<Subscription>('/api/v1/subscriptions/', { method: 'POST', json: body });
}
