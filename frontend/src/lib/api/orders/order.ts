import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Order, OrderDetail } from '../types';
import { orderKeys } from './keys';
import { FINAL_STATES, isStaging } from './orders';

/** Every 2.5 s while files come back from tape; slowly while ready (downloads complete it). */
export const STAGING_REFRESH_MS = 2500;
export const READY_REFRESH_MS = 15000;

/** GET /api/v1/orders/{id}/, refreshed until the order is final. */
export function orderQuery(id: number) {
  return queryOptions({
    queryKey: orderKeys.detail(id),
    queryFn: ({ signal }) => apiFetch<OrderDetail>(`/api/v1/orders/${id}/`, { signal }),
    refetchInterval: (query) => {
      const state = query.state.data?.state;
      if (!state || FINAL_STATES.includes(state)) return false;
      return isStaging(state) ? STAGING_REFRESH_MS : READY_REFRESH_MS;
    },
  });
}

/** POST /api/v1/orders/{id}/cancel/ — 409 with the reason when the order is already final. */
export function cancelOrder(id: number) {
  return apiFetch<Order>(`/api/v1/orders/${id}/cancel/`, { method: 'POST' });
}

/** The download script of an order (a plain link: the browser saves it). */
export function scriptUrl(id: number): string {
  return `/api/v1/orders/${id}/script/`;
}
