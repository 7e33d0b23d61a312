import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Page, SubscriptionDelivery } from '../types';
import { subscriptionKeys } from './keys';

/** New deliveries show up without a reload. */
export const DELIVERY_REFRESH_MS = 5_000;

/** GET /api/v1/subscriptions/{id}/deliveries/, newest first. */
export function deliveriesQuery(id: number, cursor: string | null = null) {
  return queryOptions({
    queryKey: subscriptionKeys.deliveries(id, cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<SubscriptionDelivery>>(`/api/v1/subscriptions/${id}/deliveries/`, {
        params: { cursor },
        signal,
      }),
    refetchInterval: DELIVERY_REFRESH_MS,
  });
}
