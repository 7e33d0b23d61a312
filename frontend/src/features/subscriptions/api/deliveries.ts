import { queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One granule sent for a subscription. */
export interface SubscriptionDelivery {
  id: number;
  granule_pk: number;
  /** COLLECTION.VERSION:granule_id */
  granule: string;
  state: DeliveryState;
  attempts: number;
  detail: string;
  created_at: string;
  delivered_at: string | null;
}

/** New deliveries show up without a reload. */
export const DELIVERY_REFRESH_MS = 5_000;

/** GET /api/v1/subscriptions/{id}/deliveries/, newest first. */
export function deliveriesQuery(id: number, cursor: string | null = null) {
  return queryOptions({
    queryKey: ['subscriptions', 'deliveries', id, { cursor }] as const,
    queryFn: ({ signal }) =>
      apiFetch<Page<SubscriptionDelivery>>(`/api/v1/subscriptions/${id}/deliveries/`, {
        params: { cursor },
        signal,
      }),
    refetchInterval: DELIVERY_REFRESH_MS,
  });
}
