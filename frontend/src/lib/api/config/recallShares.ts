import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { RecallShare, RecallSharesUpdate } from '../types';
import { configKeys } from './keys';

/** GET /api/v1/config/recall-shares/: each kind of recall with its weight and reads lately. */
export function recallSharesQuery() {
  return queryOptions({
    queryKey: [...configKeys.all, 'recall-shares'] as const,
    queryFn: ({ signal }) => apiFetch<RecallShare[]>('/api/v1/config/recall-shares/', { signal }),
  });
}

/** PUT /api/v1/config/recall-shares/: new weights (audited). */
export function setRecallShares(body: RecallSharesUpdate) {
  return apiFetch<RecallShare[]>('/api/v1/config/recall-shares/', { method: 'PUT', json: body });
}
