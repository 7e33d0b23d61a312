import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { GranuleDetail } from '../types';
import { granuleKeys } from './keys';

/** GET /api/v1/granules/{id}/: its files with where they are stored. */
export function granuleQuery(id: number) {
  return queryOptions({
    queryKey: granuleKeys.detail(id),
    queryFn: ({ signal }) => apiFetch<GranuleDetail>(`/api/v1/granules/${id}/`, { signal }),
  });
}
