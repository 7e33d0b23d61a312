import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import type { IngestGranuleRow as GranuleRowBase } from '../../dashboards/api/ingestRequests';
import { isFinal, PROVIDER_REFRESH_MS, type IngestRequest } from './requests';

/** One granule of a request, as the detail endpoint lists it. */
export interface IngestGranuleRow extends GranuleRowBase {
  bytes_total: number;
  bytes_done: number;
  catalog_granule: number | null;
  archived_at: string | null;
}

export interface IngestRequestDetail extends IngestRequest {
  counts: Record<string, number>;
  granules: IngestGranuleRow[];
}

export const GRANULE_STATES = ['received', 'staged', 'validated', 'archiving', 'archived', 'failed'];

/** GET /api/v1/ingest/requests/{id}/[?state=…]: state, % done and every granule; live until final. */
export function ingestRequestQuery(id: number, state = '') {
  return queryOptions({
    queryKey: ['ingest', 'provider-requests', id, { state }] as const,
    queryFn: ({ signal }) =>
      apiFetch<IngestRequestDetail>(`/api/v1/ingest/requests/${id}/`, { params: { state }, signal }),
    refetchInterval: (query) => (query.state.data && isFinal(query.state.data) ? false : PROVIDER_REFRESH_MS),
  });
}
