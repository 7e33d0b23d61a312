import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { EventEndpoint, EventEndpointBody, EventEndpointWithSecret } from '../types';
import { eventKeys } from './keys';

/** GET /api/v1/event-endpoints/ (not paged): where the user's events go. */
export function eventEndpointsQuery() {
  return queryOptions({
    queryKey: eventKeys.list(),
    queryFn: ({ signal }) => apiFetch<EventEndpoint[]>('/api/v1/event-endpoints/', { signal }),
  });
}

/** POST /api/v1/event-endpoints/: a webhook's signing secret is in this answer only. */
export function createEventEndpoint(body: EventEndpointBody) {
  return apiFetch<EventEndpointWithSecret>('/api/v1/event-endpoints/', {
    method: 'POST',
    json: body,
  });
}
