import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { ConsoleGranule, Page } from '../types';
import { consoleKeys, type GranuleFilters } from './keys';

export const CONSOLE_PAGE_SIZE = 25;

/** GET /api/v1/console/granules/: every provider's granules the filter selects, newest first. */
export function consoleGranulesQuery(filters: GranuleFilters, cursor: string | null) {
  return queryOptions({
    queryKey: consoleKeys.granuleList(filters, cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<ConsoleGranule>>('/api/v1/console/granules/', {
        params: { ...filters, cursor, limit: CONSOLE_PAGE_SIZE, ordering: '-created_at' },
        signal,
      }),
  });
}
