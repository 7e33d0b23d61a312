import { apiFetch } from '../../../lib/api';
import type { Destination, DestinationBody } from './destinations';

/** PATCH /api/v1/destinations/{id}/: later pushes go to the changed destination. */
export function updateDestination(id: number, body: DestinationBody) {
  return apiFetch<Destination>(`/api/v1/destinations/${id}/`, { method: 'PATCH', json: body });
}
