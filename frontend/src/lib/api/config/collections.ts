import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { CollectionConfig, CollectionConfigChange } from '../types';
import { configKeys } from './keys';

/** GET /api/v1/config/collections/: every collection with its archive policy. */
export function configCollectionsQuery() {
  return queryOptions({
    queryKey: configKeys.collections(),
    queryFn: ({ signal }) =>
      apiFetch<CollectionConfig[]>('/api/v1/config/collections/', { signal }),
  });
}

/** POST /api/v1/config/collections/: a new collection with its policy. */
export function createCollection(body: CollectionConfigChange) {
  return apiFetch<CollectionConfig>('/api/v1/config/collections/', { method: 'POST', json: body });
}
