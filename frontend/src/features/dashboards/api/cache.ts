import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import { LIVE_REFRESH_MS } from './metrics';

/** GET /api/v1/archive/cache/: the RAID cache in bytes, watermarks as fractions. */
export interface CacheUsage {
  capacity_bytes: number;
  used_bytes: number;
  free_bytes: number;
  dirty_bytes: number;
  clean_bytes: number;
  pinned_bytes: number;
  staging_bytes: number;
  high_watermark: number;
  low_watermark: number;
}

export function cacheQuery() {
  return queryOptions({
    queryKey: ['archive', 'cache'] as const,
    queryFn: ({ signal }) => apiFetch<CacheUsage>('/api/v1/archive/cache/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
