import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { NewOrder, Order, OrderDetail, OrderState, Page } from '../types';
import { orderKeys } from './keys';

/** States that will not change any more. */
export const FINAL_STATES: OrderState[] = ['completed', 'failed', 'cancelled', 'expired'];

/** While files are being recalled the order changes within seconds. */
export function isStaging(state: OrderState): boolean {
  return state === 'submitted' || state === 'staging';
}

/** GET /api/v1/orders/: the user's orders, newest first, refreshed while any is staging. */
export function ordersQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: orderKeys.list(cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<Order>>('/api/v1/orders/', { params: { cursor }, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) =>
      query.state.data?.results.some((o) => isStaging(o.state)) ? 5000 : false,
  });
}

/** POST /api/v1/orders/ without granules: orders the whole cart, which then empties. */
export function orderCart(body: NewOrder) {
  return apiFetch<OrderDetail>('/api/v1/orders/', { method: 'POST', json: body });
}
