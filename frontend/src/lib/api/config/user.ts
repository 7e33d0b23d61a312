import { apiFetch } from '../client';
import type { UserConfig, UserConfigChange } from '../types';

/** PATCH /api/v1/config/users/{id}/: role, active, email, providers. */
export function updateUser(id: number, body: Partial<UserConfigChange>) {
  return apiFetch<UserConfig>(`/api/v1/config/users/${id}/`, { method: 'PATCH', json: body });
}
