import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch, type QueryParams } from '../client';
import type { Timeline } from '../types';
import { granuleKeys } from './keys';

/** GET /api/v1/granules/timeline/: how many granules of the search start in each time bucket. */
export function granuleTimelineQuery(params: QueryParams) {
  return queryOptions({
    queryKey: granuleKeys.timeline(params),
    queryFn: ({ signal }) => apiFetch<Timeline>('/api/v1/granules/timeline/', { params, signal }),
    placeholderData: keepPreviousData,
  });
}
