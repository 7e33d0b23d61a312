import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Destination, DestinationBody } from '../types';
import { destinationKeys } from './keys';

/** GET /api/v1/destinations/ (not paged). */
export function destinationsQuery() {
  return queryOptions({
    queryKey: destinationKeys.list(),
    queryFn: ({ signal }) => apiFetch<Destination[]>('/api/v1/destinations/', { signal }),
  });
}

/** POST /api/v1/destinations/ */
export function createDestination(body: DestinationBody) {
  return apiFetch<Destination>('/api/v1/destinations/', { method: 'POST', json: body });
}
