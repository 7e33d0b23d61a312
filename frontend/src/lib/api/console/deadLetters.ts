import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { DeadLetterPage } from '../types';
import { consoleKeys, type DeadLetterParams } from './keys';

/** GET /api/v1/console/dead-letter/: work that used up its retries, a page at a time. */
export function deadLettersQuery(params: DeadLetterParams = {}) {
  return queryOptions({
    queryKey: consoleKeys.deadLetters(params),
    queryFn: ({ signal }) =>
      apiFetch<DeadLetterPage>('/api/v1/console/dead-letter/', { params: { ...params }, signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
