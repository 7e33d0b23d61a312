import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { CollectionDetail } from '../types';
import { collectionKeys } from './keys';

/** GET /api/v1/collections/{key}/: a collection's page, e.g. MOD021KM.061. */
export function collectionQuery(key: string) {
  return queryOptions({
    queryKey: collectionKeys.detail(key),
    queryFn: ({ signal }) =>
      apiFetch<CollectionDetail>(`/api/v1/collections/${encodeURIComponent(key)}/`, { signal }),
  });
}
