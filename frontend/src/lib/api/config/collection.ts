import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { CollectionConfig, CollectionConfigChange } from '../types';
import { configKeys } from './keys';

function url(key: string) {
  return `/api/v1/config/collections/${encodeURIComponent(key)}/`;
}

/** GET /api/v1/config/collections/{key}/ */
export function configCollectionQuery(key: string) {
  return queryOptions({
    queryKey: configKeys.collection(key),
    queryFn: ({ signal }) => apiFetch<CollectionConfig>(url(key), { signal }),
  });
}

/** PATCH /api/v1/config/collections/{key}/ */
export function updateCollection(key: string, body: Partial<CollectionConfigChange>) {
  return apiFetch<CollectionConfig>(url(key), { method: 'PATCH', json: body });
}
