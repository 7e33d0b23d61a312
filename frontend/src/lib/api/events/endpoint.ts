import { apiFetch } from '../client';

/** DELETE /api/v1/event-endpoints/{id}/: the endpoint, its rules and its delivery log go. */
export function deleteEventEndpoint(id: number) {
  return apiFetch<void>(`/api/v1/event-endpoints/${id}/`, { method: 'DELETE' });
}
