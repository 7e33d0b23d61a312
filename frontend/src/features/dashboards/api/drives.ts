import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import { LIVE_REFRESH_MS } from './metrics';

export type DriveState = 'idle' | 'mounting' | 'reading' | 'writing' | 'unloading' | 'offline';

export interface Drive {
  name: string;
  silo: string;
  model: string;
  state: DriveState | string;
  mode: string;
  mounted_volume: string | null;
  volume_group: string | null;
  mounted_at: string | null;
  last_used_at: string | null;
  consecutive_errors: number;
  error_count: number;
  last_error: string;
  offline_reason: string;
  current_rate_b_s: number;
}

/** GET /api/v1/archive/drives/ (not paged) */
export function drivesQuery() {
  return queryOptions({
    queryKey: ['archive', 'drives'] as const,
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
