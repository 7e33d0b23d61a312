import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { ConsoleGranulePage } from '../types';
import { consoleKeys } from './keys';

/** GET /api/v1/console/granules/ID/: files, cache state, copies and the timeline. */
export function consoleGranuleQuery(id: number) {
  return queryOptions({
    queryKey: consoleKeys.granule(id),
    queryFn: ({ signal }) =>
      apiFetch<ConsoleGranulePage>(`/api/v1/console/granules/${id}/`, { signal }),
  });
}
