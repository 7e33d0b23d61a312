import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';

export type OrderState =
  | 'submitted'
  | 'staging'
  | 'ready'
  | 'partially_ready'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'expired';

export type ItemState = 'waiting' | 'ready' | 'failed' | 'expired' | 'cancelled';

export type Delivery = 'https' | 'push';

/** An order as GET /api/v1/orders/ lists it. */
export interface Order {
  id: number;
  user: string;
  state: OrderState;
  delivery: Delivery;
  destination: number | null;
  subscription: number | null;
  total_bytes: number;
  /** Files per item state. */
  counts: Record<ItemState, number>;
  error: string;
  created_at: string;
  updated_at: string;
  ready_at: string | null;
  expires_at: string | null;
}

/** States that will not change any more. */
export const FINAL_STATES: OrderState[] = ['completed', 'failed', 'cancelled', 'expired'];

/** While files are being recalled the order changes within seconds. */
export function isStaging(state: OrderState): boolean {
  return state === 'submitted' || state === 'staging';
}

/** GET /api/v1/orders/: the user's orders, newest first, refreshed while any is staging. */
export function ordersQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: ['orders', 'list', { cursor }] as const,
    queryFn: ({ signal }) => apiFetch<Page<Order>>('/api/v1/orders/', { params: { cursor }, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.results.some((o) => isStaging(o.state)) ? 5000 : false),
  });
}

export interface NewOrder {
  delivery: Delivery;
  destination?: number | null;
}

/** POST /api/v1/orders/ without granules: orders the whole cart, which then empties. */
export function orderCart(body: NewOrder) {
  return apiFetch<Order>('/api/v1/orders/', { method: 'POST', json: body });
}
