import { apiFetch } from '../client';
import type { Destination, DestinationBody } from '../types';

/** PATCH /api/v1/destinations/{id}/: later pushes go to the changed destination. */
export function updateDestination(id: number, body: DestinationBody) {
  return apiFetch<Destination>(`/api/v1/destinations/${id}/`, { method: 'PATCH', json: body });
}
