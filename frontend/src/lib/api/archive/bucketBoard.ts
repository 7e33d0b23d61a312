import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { BucketFigures } from '../types';
import { archiveKeys } from './keys';

/**
 * GET /api/v1/archive/buckets/board/: each bucket's objects, work, last hour's puts and gets,
 * failures and health (the server waits a few seconds at most for a store that is down).
 */
export function bucketBoardQuery() {
  return queryOptions({
    queryKey: archiveKeys.bucketBoard(),
    queryFn: ({ signal }) =>
      apiFetch<BucketFigures[]>('/api/v1/archive/buckets/board/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
