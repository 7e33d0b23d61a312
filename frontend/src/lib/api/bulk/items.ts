import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { BulkItem, Page } from '../types';
import { bulkKeys } from './keys';

/** GET /api/v1/console/bulk/ID/items/?state=…: each granule's state and outcome. */
export function bulkItemsQuery(id: number, state: string, cursor: string | null) {
  return queryOptions({
    queryKey: bulkKeys.items(id, state, cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<BulkItem>>(`/api/v1/console/bulk/${id}/items/`, {
        params: { state, cursor, limit: 50 },
        signal,
      }),
    placeholderData: keepPreviousData,
    refetchInterval: LIVE_REFRESH_MS,
  });
}
