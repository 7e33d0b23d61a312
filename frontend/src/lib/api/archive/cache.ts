import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { CacheUsage } from '../types';
import { archiveKeys } from './keys';

/** GET /api/v1/archive/cache/: the RAID cache in bytes, watermarks as fractions. */
export function cacheQuery() {
  return queryOptions({
    queryKey: archiveKeys.cache(),
    queryFn: ({ signal }) => apiFetch<CacheUsage>('/api/v1/archive/cache/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
