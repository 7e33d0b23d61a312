import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import type { SubscriptionFilter } from './subscriptions';

export interface PreviewGranule {
  id: number;
  collection: string;
  granule_id: string;
  temporal_start: string;
  temporal_end: string;
  archived_at: string;
}

/** POST /api/v1/subscriptions/preview/: what the filter matches among recent granules. */
export interface Preview {
  count: number;
  days: number;
  since: string;
  sample: PreviewGranule[];
}

export const PREVIEW_DAYS = 30;

export function previewQuery(filter: SubscriptionFilter) {
  return queryOptions({
    queryKey: ['subscriptions', 'preview', filter] as const,
    queryFn: ({ signal }) =>
      apiFetch<Preview>('/api/v1/subscriptions/preview/', {
        method: 'POST',
        json: { ...filter, days: PREVIEW_DAYS },
        signal,
      }),
    // The old count stays on screen while the next one loads, instead of a flash of nothing.
    placeholderData: keepPreviousData,
    retry: false,
    staleTime: 30_000,
  });
}
