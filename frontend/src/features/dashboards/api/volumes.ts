import { queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';
import { LIVE_REFRESH_MS } from './metrics';

export interface Volume {
  label: string;
  silo: string;
  group: string | null;
  media: string;
  state: string;
  capacity_bytes: number;
  end_of_data: number;
  live_bytes: number;
  file_count: number;
  percent_full: number;
  mount_count: number;
  mounted_on: string | null;
  fault: string;
}

/** Enough for any demo or test archive; a larger one shows "first N" rather than hanging. */
export const MAX_VOLUME_PAGES = 20;
const PAGE_SIZE = 1000;

export interface VolumeList {
  volumes: Volume[];
  /** True when there were more pages than MAX_VOLUME_PAGES. */
  truncated: boolean;
}

function sameOrigin(link: string): string {
  const url = new URL(link, window.location.href);
  return `${url.pathname}${url.search}`;
}

/** Every volume, following the API's cursor `next` links. */
export async function fetchAllVolumes(signal?: AbortSignal): Promise<VolumeList> {
  const volumes: Volume[] = [];
  let link: string | null = '/api/v1/archive/volumes/';
  let pages = 0;
  while (link && pages < MAX_VOLUME_PAGES) {
    const params: Record<string, number> | undefined = pages === 0 ? { limit: PAGE_SIZE } : undefined;
    const page: Page<Volume> = await apiFetch<Page<Volume>>(link, { params, signal });
    volumes.push(...page.results);
    // Same origin whatever host name the API put in the link (it may sit behind a proxy).
    link = page.next ? sameOrigin(page.next) : null;
    pages += 1;
  }
  return { volumes, truncated: Boolean(link) };
}

export function volumesQuery() {
  return queryOptions({
    queryKey: ['archive', 'volumes'] as const,
    queryFn: ({ signal }) => fetchAllVolumes(signal),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

export interface VolumeGroup {
  name: string;
  role: string;
  silo: string;
  volumes: number;
  capacity_bytes: number;
  used_bytes: number;
  live_bytes: number;
  percent_full: number;
}

/** GET /api/v1/archive/volume-groups/ */
export function volumeGroupsQuery() {
  return queryOptions({
    queryKey: ['archive', 'volume-groups'] as const,
    queryFn: ({ signal }) => apiFetch<VolumeGroup[]>('/api/v1/archive/volume-groups/', { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
