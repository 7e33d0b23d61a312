import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Collection, Page } from '../types';
import { collectionKeys, type CollectionListParams } from './keys';

/** GET /api/v1/collections/ */
export function collectionsQuery({ q = '', cursor = null, ...facets }: CollectionListParams = {}) {
  const text = q.trim();
  return queryOptions({
    queryKey: collectionKeys.list({ q: text, cursor, ...facets }),
    queryFn: ({ signal }) =>
      apiFetch<Page<Collection>>('/api/v1/collections/', {
        params: { q: text, cursor, ...facets },
        signal,
      }),
    // Keep the old rows on screen while a new filter loads instead of flashing a spinner.
    placeholderData: keepPreviousData,
  });
}
