import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import type { QueryParams } from '../client';
import type { Timeline } from '../types';
import { granuleKeys } from './keys';
import { searchFetch } from './searchRequest';

/**
 * GET /api/v1/granules/timeline/ (a POST with a shape): how many granules of the search start
 * in each time bucket.
 */
export function granuleTimelineQuery(params: QueryParams) {
  return queryOptions({
    queryKey: granuleKeys.timeline(params),
    queryFn: ({ signal }) => {
      const path = '/api/v1/granules/timeline/';
      return searchFetch<Timeline>(path, path, params, signal);
    },
    placeholderData: keepPreviousData,
  });
}
