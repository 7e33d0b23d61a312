import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { NewUser, UserConfig, UserConfigChange } from '../types';
import { configKeys } from './keys';

/** GET /api/v1/config/users/ */
export function configUsersQuery() {
  return queryOptions({
    queryKey: configKeys.users(),
    queryFn: ({ signal }) => apiFetch<UserConfig[]>('/api/v1/config/users/', { signal }),
  });
}

/** POST /api/v1/config/users/: the answer carries the first password, shown once. */
export function createUser(body: UserConfigChange) {
  return apiFetch<NewUser>('/api/v1/config/users/', { method: 'POST', json: body });
}
