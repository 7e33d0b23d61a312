import { apiFetch } from '../client';
import type { AddedMatching } from '../types';

/**
 * POST /api/v1/cart/matching/: puts every granule the search selects in the cart, or none;
 * 400 says why (over the cart's limits, restricted granules).
 */
export function addMatchingToCart(filters: Record<string, string>) {
  return apiFetch<AddedMatching>('/api/v1/cart/matching/', {
    method: 'POST',
    json: { filters },
  });
}
