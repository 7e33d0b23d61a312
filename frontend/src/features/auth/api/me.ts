import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

export type Role = 'anonymous' | 'user' | 'provider' | 'operator';

/** Who is calling, as GET /api/v1/me/ says; anonymous visitors get authenticated=false. */
export interface Me {
  authenticated: boolean;
  username: string;
  email: string;
  role: Role;
  roles: Role[];
  providers: string[];
}

export const anonymousMe: Me = {
  authenticated: false,
  username: '',
  email: '',
  role: 'anonymous',
  roles: [],
  providers: [],
};

export function meQuery() {
  return queryOptions({
    queryKey: ['auth', 'me'] as const,
    queryFn: ({ signal }) => apiFetch<Me>('/api/v1/me/', { signal }),
    // The session only changes through the login page and the Log out button, which update it.
    staleTime: 5 * 60 * 1000,
  });
}
