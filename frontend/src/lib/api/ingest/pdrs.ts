import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Page, Pdr } from '../types';
import { ingestKeys } from './keys';
import { PROVIDER_REFRESH_MS } from './requests';

/** An accepted PDR waits for its granules; rejected and answered ones are final. */
export function pdrIsFinal(pdr: Pick<Pdr, 'state'>): boolean {
  return pdr.state !== 'accepted';
}

/** GET /api/v1/ingest/pdrs/: newest first, live while any waits for its PAN. */
export function pdrsQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: ingestKeys.pdrList(cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<Pdr>>('/api/v1/ingest/pdrs/', { params: { cursor }, signal }),
    refetchInterval: (query) =>
      query.state.data?.results.every(pdrIsFinal) ? false : PROVIDER_REFRESH_MS,
  });
}
