import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { Drive } from '../types';
import { archiveKeys } from './keys';

/** GET /api/v1/archive/drives/ (not paged) */
export function drivesQuery() {
  return queryOptions({
    queryKey: archiveKeys.drives(),
    queryFn: ({ signal }) => apiFetch<Drive[]>('/api/v1/archive/drives/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

/** POST /api/v1/archive/drives/{name}/vary/ — 409 with the reason when refused. */
export function varyDrive(name: string, online: boolean, reason = '') {
  return apiFetch<Drive>(`/api/v1/archive/drives/${encodeURIComponent(name)}/vary/`, {
    method: 'POST',
    json: { online, reason },
  });
}
