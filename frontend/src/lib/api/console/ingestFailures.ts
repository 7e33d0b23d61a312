import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { IngestFailure, Page } from '../types';
import { consoleKeys, type GranuleFilters } from './keys';

/**
 * GET /api/v1/console/granules/ingest-failures/: granules that failed in ingest before the
 * catalog had them (the failed filter counts them), with why and what can still be done.
 */
export function ingestFailuresQuery(filters: GranuleFilters, cursor: string | null) {
  return queryOptions({
    queryKey: consoleKeys.ingestFailures(filters, cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<IngestFailure>>('/api/v1/console/granules/ingest-failures/', {
        params: { ...filters, cursor, limit: 25 },
        signal,
      }),
  });
}
