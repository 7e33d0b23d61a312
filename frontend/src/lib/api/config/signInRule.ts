import { apiFetch } from '../client';

/** DELETE /api/v1/config/sign-in-rules/{id}/ */
export function deleteSignInRule(id: number) {
  return apiFetch<void>(`/api/v1/config/sign-in-rules/${id}/`, { method: 'DELETE' });
}
