import { apiFetch } from '../client';
import type { Me } from '../types';

/** POST /api/v1/auth/login/: starts a session; 401 "Wrong user name or password." otherwise
 * (429 when tried too often). */
export function logIn(username: string, password: string) {
  return apiFetch<Me>('/api/v1/auth/login/', { method: 'POST', json: { username, password } });
}
