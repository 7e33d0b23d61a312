import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { SignInRule, SignInRuleRequest } from '../types';
import { configKeys } from './keys';

/** GET /api/v1/config/sign-in-rules/ */
export function signInRulesQuery() {
  return queryOptions({
    queryKey: [...configKeys.all, 'sign-in-rules'] as const,
    queryFn: ({ signal }) => apiFetch<SignInRule[]>('/api/v1/config/sign-in-rules/', { signal }),
  });
}

/** POST /api/v1/config/sign-in-rules/ */
export function createSignInRule(body: SignInRuleRequest) {
  return apiFetch<SignInRule>('/api/v1/config/sign-in-rules/', { method: 'POST', json: body });
}
