import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { ApiToken, ApiTokenRequest, NewApiToken } from '../types';

export const tokenKeys = { all: ['tokens'] as const };

/** GET /api/v1/auth/tokens/: the caller's personal API tokens (never the tokens themselves). */
export function tokensQuery() {
  return queryOptions({
    queryKey: tokenKeys.all,
    queryFn: ({ signal }) => apiFetch<ApiToken[]>('/api/v1/auth/tokens/', { signal }),
  });
}

/** POST /api/v1/auth/tokens/: the answer carries the token, shown this once. */
export function createToken(body: ApiTokenRequest) {
  return apiFetch<NewApiToken>('/api/v1/auth/tokens/', { method: 'POST', json: body });
}
