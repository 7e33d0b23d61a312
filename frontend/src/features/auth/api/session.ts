import { apiFetch } from '../../../lib/api';
import type { Me } from './me';

/** POST /api/v1/auth/login/: starts a session; 400 "Wrong user name or password." otherwise. */
export function logIn(username: string, password: string) {
  return apiFetch<Me>('/api/v1/auth/login/', { method: 'POST', json: { username, password } });
}

/** POST /api/v1/auth/logout/ */
export function logOut() {
  return apiFetch<void>('/api/v1/auth/logout/', { method: 'POST' });
}

/** Only same-site paths are followed after login, so a crafted link cannot send users away. */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/login')) return '/';
  return next;
}
