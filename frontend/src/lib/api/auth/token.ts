import { apiFetch } from '../client';
import type { ApiToken } from '../types';

/** DELETE /api/v1/auth/tokens/{id}/: revokes the token (it stays listed, revoked). */
export function revokeToken(id: number) {
  return apiFetch<ApiToken>(`/api/v1/auth/tokens/${id}/`, { method: 'DELETE' });
}
