import { apiFetch } from '../client';
import type { EventDelivery } from '../types';

/** POST /api/v1/event-endpoints/{id}/test/: a test event through the endpoint's lane. */
export function sendTestEvent(id: number) {
  return apiFetch<EventDelivery>(`/api/v1/event-endpoints/${id}/test/`, { method: 'POST' });
}
