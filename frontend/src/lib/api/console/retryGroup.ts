import { apiFetch } from '../client';
import type { RetryGroupResult } from '../types';

/** POST /api/v1/console/failures/groups/retry/: every item of one group sent round again. */
export function retryGroup(key: string) {
  return apiFetch<RetryGroupResult>('/api/v1/console/failures/groups/retry/', {
    method: 'POST',
    json: { key },
  });
}
