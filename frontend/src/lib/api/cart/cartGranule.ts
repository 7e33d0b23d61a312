import { apiFetch } from '../client';
import type { Cart } from '../types';

/** DELETE /api/v1/cart/{granule}/ */
export function removeFromCart(granule: number) {
  return apiFetch<Cart>(`/api/v1/cart/${granule}/`, { method: 'DELETE' });
}
