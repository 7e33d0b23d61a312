import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

/** A folder under the outbox that push deliveries are copied into. */
export interface Destination {
  id: number;
  name: string;
  path: string;
  folder: string;
  created_at: string;
}

/** GET /api/v1/destinations/ (not paged). */
export function destinationsQuery() {
  return queryOptions({
    queryKey: ['destinations'] as const,
    queryFn: ({ signal }) => apiFetch<Destination[]>('/api/v1/destinations/', { signal }),
  });
}

/** POST /api/v1/destinations/ */
export function createDestination(name: string) {
  return apiFetch<Destination>('/api/v1/destinations/', { method: 'POST', json: { name } });
}
