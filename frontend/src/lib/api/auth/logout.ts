import { apiFetch } from '../client';

/** POST /api/v1/auth/logout/ */
export function logOut() {
  return apiFetch<void>('/api/v1/auth/logout/', { method: 'POST' });
}
