import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Cart } from '../types';
import { cartKeys } from './keys';

/** GET /api/v1/cart/ (logged-in users only: `meta.session` has a logout drop it unasked). */
export function cartQuery(enabled = true) {
  return queryOptions({
    queryKey: cartKeys.all,
    queryFn: ({ signal }) => apiFetch<Cart>('/api/v1/cart/', { signal }),
    enabled,
    meta: { session: true },
  });
}

/** POST /api/v1/cart/: 400/403 say why a granule cannot be added (limit, restricted). */
export function addToCart(granules: number[]) {
  return apiFetch<Cart>('/api/v1/cart/', { method: 'POST', json: { granules } });
}

/** DELETE /api/v1/cart/: empties it. */
export function clearCart() {
  return apiFetch<Cart>('/api/v1/cart/', { method: 'DELETE' });
}
