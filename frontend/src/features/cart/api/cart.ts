import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

export interface CartGranule {
  /** The granule's numeric id. */
  granule: number;
  collection: string;
  granule_id: string;
  size: number;
  added_at: string;
}

/** What one order may hold, and how many orders the user has open now. */
export interface OrderLimits {
  granules: number;
  bytes: number;
  open_orders: number;
  open_orders_used: number;
}

/** The cart as every /api/v1/cart/ endpoint answers it. */
export interface Cart {
  count: number;
  bytes: number;
  granules: CartGranule[];
  limits: OrderLimits;
}

/** GET /api/v1/cart/ (logged-in users only). */
export function cartQuery(enabled = true) {
  return queryOptions({
    queryKey: ['cart'] as const,
    queryFn: ({ signal }) => apiFetch<Cart>('/api/v1/cart/', { signal }),
    enabled,
  });
}

/** POST /api/v1/cart/: 400/403 say why a granule cannot be added (limit, restricted). */
export function addToCart(granules: number[]) {
  return apiFetch<Cart>('/api/v1/cart/', { method: 'POST', json: { granules } });
}

/** DELETE /api/v1/cart/{granule}/ */
export function removeFromCart(granule: number) {
  return apiFetch<Cart>(`/api/v1/cart/${granule}/`, { method: 'DELETE' });
}

/** DELETE /api/v1/cart/: empties it. */
export function clearCart() {
  return apiFetch<Cart>('/api/v1/cart/', { method: 'DELETE' });
}
