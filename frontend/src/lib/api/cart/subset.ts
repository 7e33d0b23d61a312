import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { SubsetEstimate, SubsetOptions } from '../types';
import { cartKeys } from './keys';

/**
 * POST /api/v1/cart/subset/: what the cart gives cut to `subset` (estimated bytes, each
 * collection's variables); a 400 says why a choice cannot work, before ordering.
 */
export function subsetEstimateQuery(subset: SubsetOptions | null) {
  return queryOptions({
    queryKey: [...cartKeys.all, 'subset', subset] as const,
    queryFn: ({ signal }) =>
      apiFetch<SubsetEstimate>('/api/v1/cart/subset/', {
        method: 'POST',
        json: { subset },
        signal,
      }),
    placeholderData: keepPreviousData,
    retry: false,
  });
}
