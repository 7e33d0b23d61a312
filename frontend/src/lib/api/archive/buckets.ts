import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Bucket } from '../types';
import { archiveKeys } from './keys';

/** GET /api/v1/archive/buckets/ (not paged): the object-store buckets copies may go to. */
export function bucketsQuery() {
  return queryOptions({
    queryKey: archiveKeys.buckets(),
    queryFn: ({ signal }) => apiFetch<Bucket[]>('/api/v1/archive/buckets/', { signal }),
  });
}
