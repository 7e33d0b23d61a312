import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import { FINAL_STATES, isStaging, type ItemState, type Order } from './orders';

/** One file of an order, with its own state. */
export interface OrderItem {
  id: number;
  granule_pk: number;
  /** "COLLECTION:GRANULE_ID" */
  granule: string;
  file_id: number;
  name: string;
  size: number;
  checksum_type: string;
  checksum: string;
  state: ItemState;
  /** cache, or tape while it is being recalled. */
  residency: 'cache' | 'tape';
  /** Seconds until a recall should be done, as the archive estimates it. */
  eta_s: number | null;
  error: string;
  ready_at: string | null;
  expires_at: string | null;
  downloaded_at: string | null;
  pushed_at: string | null;
}

export interface OrderDetail extends Order {
  items: OrderItem[];
}

/** Every 2.5 s while files come back from tape; slowly while ready (downloads complete it). */
export const STAGING_REFRESH_MS = 2500;
export const READY_REFRESH_MS = 15000;

/** GET /api/v1/orders/{id}/, refreshed until the order is final. */
export function orderQuery(id: number) {
  return queryOptions({
    queryKey: ['orders', 'detail', id] as const,
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
