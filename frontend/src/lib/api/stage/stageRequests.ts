import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Page, StageRequest } from '../types';
import { stageKeys } from './keys';

/** GET /api/v1/stage-requests/: bulk stage requests (an operator sees everyone's), newest
 * first, refreshed while any still has files to stage. */
export function stageRequestsQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: stageKeys.list(cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<StageRequest>>('/api/v1/stage-requests/', { params: { cursor }, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) =>
      query.state.data?.results.some((s) => s.completed_at === null) ? 5000 : false,
  });
}
