import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Me } from '../types';
import { authKeys } from './keys';

export const anonymousMe: Me = {
  authenticated: false,
  username: '',
  email: '',
  role: 'anonymous',
  roles: [],
  providers: [],
};

/** GET /api/v1/me/: who is calling; anonymous visitors get authenticated=false. */
export function meQuery() {
  return queryOptions({
    queryKey: authKeys.me(),
    queryFn: ({ signal }) => apiFetch<Me>('/api/v1/me/', { signal }),
    // The session only changes through the login page and the Log out button, which update it.
    staleTime: 5 * 60 * 1000,
  });
}
