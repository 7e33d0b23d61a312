import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { IngestGranuleState, IngestRequestDetail } from '../types';
import { ingestKeys } from './keys';
import { isFinal, PROVIDER_REFRESH_MS } from './requests';

export const GRANULE_STATES: IngestGranuleState[] = [
  'received',
  'staged',
  'validated',
  'archiving',
  'archived',
  'failed',
];

/**
 * GET /api/v1/ingest/requests/{id}/[?state=…]: state, % done and every granule (or those in
 * `state`); live until the request is final.
 */
export function ingestRequestQuery(id: number, state = '') {
  return queryOptions({
    queryKey: ingestKeys.request(id, state),
    queryFn: ({ signal }) =>
      apiFetch<IngestRequestDetail>(`/api/v1/ingest/requests/${id}/`, {
        params: { state },
        signal,
      }),
    refetchInterval: (query) =>
      query.state.data && isFinal(query.state.data) ? false : PROVIDER_REFRESH_MS,
  });
}
