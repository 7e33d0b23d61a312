import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Preview, SubscriptionFilter } from '../types';
import { subscriptionKeys } from './keys';

export const PREVIEW_DAYS = 30;

/** POST /api/v1/subscriptions/preview/: what the filter matches among recent granules. */
export function previewQuery(filter: SubscriptionFilter) {
  return queryOptions({
    queryKey: subscriptionKeys.preview(filter),
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
