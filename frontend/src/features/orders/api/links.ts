import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

export interface DownloadLink {
  item: number;
  file_id: number;
  granule: string;
  name: string;
  size: number;
  checksum_type: string;
  checksum: string;
  /** Signed, expiring URL (ready files only). */
  url?: string;
  expires_at?: string;
  error?: string;
  eta_s?: number | null;
}

export interface OrderLinks {
  order: number;
  state: string;
  expires_at: string | null;
  links: DownloadLink[];
  failed: DownloadLink[];
  waiting: DownloadLink[];
}

/**
 * GET /api/v1/orders/{id}/links/: signed links of the ready files. `ready` (how many files are
 * ready) is part of the key, so new links are fetched as soon as more files are ready.
 */
export function orderLinksQuery(id: number, ready: number, enabled: boolean) {
  return queryOptions({
    queryKey: ['orders', 'links', id, ready] as const,
    queryFn: ({ signal }) => apiFetch<OrderLinks>(`/api/v1/orders/${id}/links/`, { signal }),
    enabled,
  });
}
