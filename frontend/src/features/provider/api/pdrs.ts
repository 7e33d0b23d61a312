import { queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';
import { PROVIDER_REFRESH_MS } from './requests';

export type PdrState = 'rejected' | 'accepted' | 'answered';

/** A Product Delivery Record and its answer (PDRD when refused, PAN when done). */
export interface Pdr {
  id: number;
  url: string;
  provider: string;
  name: string;
  path: string;
  state: PdrState;
  disposition: string;
  detail: string;
  /** API URL of the ingest request it started. */
  request: string | null;
  pdrd: string;
  pan: string;
  created_at: string;
  updated_at: string;
}

/** An accepted PDR waits for its granules; rejected and answered ones are final. */
export function pdrIsFinal(pdr: Pick<Pdr, 'state'>): boolean {
  return pdr.state !== 'accepted';
}

/** GET /api/v1/ingest/pdrs/: newest first, live while any waits for its PAN. */
export function pdrsQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: ['ingest', 'pdrs', { cursor }] as const,
    queryFn: ({ signal }) => apiFetch<Page<Pdr>>('/api/v1/ingest/pdrs/', { params: { cursor }, signal }),
    refetchInterval: (query) => (query.state.data?.results.every(pdrIsFinal) ? false : PROVIDER_REFRESH_MS),
  });
}
