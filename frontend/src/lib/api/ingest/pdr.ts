import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Pdr } from '../types';
import { ingestKeys } from './keys';
import { pdrIsFinal } from './pdrs';
import { PROVIDER_REFRESH_MS } from './requests';

/** GET /api/v1/ingest/pdrs/{id}/: live until the PAN is written. */
export function pdrQuery(id: number) {
  return queryOptions({
    queryKey: ingestKeys.pdr(id),
    queryFn: ({ signal }) => apiFetch<Pdr>(`/api/v1/ingest/pdrs/${id}/`, { signal }),
    refetchInterval: (query) =>
      query.state.data && pdrIsFinal(query.state.data) ? false : PROVIDER_REFRESH_MS,
  });
}
