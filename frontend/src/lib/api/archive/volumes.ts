import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { Page, Volume } from '../types';
import { archiveKeys } from './keys';

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
    const params = pages === 0 ? { limit: PAGE_SIZE } : undefined;
    const page: Page<Volume> = await apiFetch<Page<Volume>>(link, { params, signal });
    volumes.push(...page.results);
    // Same origin whatever host name the API put in the link (it may sit behind a proxy).
    link = page.next ? sameOrigin(page.next) : null;
    pages += 1;
  }
  return { volumes, truncated: Boolean(link) };
}

/** GET /api/v1/archive/volumes/, every page of it. */
export function volumesQuery() {
  return queryOptions({
    queryKey: archiveKeys.volumes(),
    queryFn: ({ signal }) => fetchAllVolumes(signal),
    refetchInterval: LIVE_REFRESH_MS,
  });
}
