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

export function meQuery() {
  return queryOptions({
    queryKey: ['auth', 'me'] as const,
    queryFn: ({ signal }) => apiFetch<Me>('/api/v1/me/', { signal }),
    // The session rarely changes under a page; login and logout go through full page loads.
    staleTime: 5 * 60 * 1000,
  });
}
