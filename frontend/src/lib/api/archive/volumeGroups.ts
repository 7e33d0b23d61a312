import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { VolumeGroup } from '../types';
import { archiveKeys } from './keys';

/** GET /api/v1/archive/volume-groups/ */
export function volumeGroupsQuery() {
  return queryOptions({
    queryKey: archiveKeys.volumeGroups(),
    queryFn: ({ signal }) => apiFetch<VolumeGroup[]>('/api/v1/archive/volume-groups/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
