import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { AuthMethods } from '../types';
import { authKeys } from './keys';

/** GET /api/v1/auth/methods/: local accounts, and the OpenID provider when one is configured. */
export function authMethodsQuery() {
  return queryOptions({
    queryKey: [...authKeys.all, 'methods'] as const,
    queryFn: ({ signal }) => apiFetch<AuthMethods>('/api/v1/auth/methods/', { signal }),
    staleTime: Infinity,
  });
}
