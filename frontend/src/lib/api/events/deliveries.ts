import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { EventDelivery } from '../types';
import { eventKeys } from './keys';

/** Deliveries are tried in the background: the log follows them without a reload. */
export const EVENT_LOG_REFRESH_MS = 2_000;

/** GET /api/v1/event-endpoints/{id}/deliveries/: the newest 200, newest first. */
export function eventDeliveriesQuery(id: number) {
  return queryOptions({
    queryKey: eventKeys.deliveries(id),
    queryFn: ({ signal }) =>
      apiFetch<EventDelivery[]>(`/api/v1/event-endpoints/${id}/deliveries/`, { signal }),
    refetchInterval: EVENT_LOG_REFRESH_MS,
  });
}
