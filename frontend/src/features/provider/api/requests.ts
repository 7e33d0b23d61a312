import { queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';
import type { IngestRequest as IngestRequestRow } from '../../dashboards/api/ingestRequests';

/** Until a request is final, its figures refresh this often. */
export const PROVIDER_REFRESH_MS = 3_000;

export const FINAL_REQUEST_STATES = ['completed', 'failed'];

/** An ingest request as GET /api/v1/ingest/requests/ lists it. */
export interface IngestRequest extends IngestRequestRow {
  /** API URL of the PDR the request came from, if it did. */
  pdr: string | null;
}

export function isFinal(request: Pick<IngestRequest, 'state'>): boolean {
  return FINAL_REQUEST_STATES.includes(request.state);
}

/** GET /api/v1/ingest/requests/: the provider's requests, newest first, live while any runs. */
export function providerRequestsQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: ['ingest', 'provider-requests', { cursor }] as const,
    queryFn: ({ signal }) =>
      apiFetch<Page<IngestRequest>>('/api/v1/ingest/requests/', { params: { cursor }, signal }),
    refetchInterval: (query) =>
      query.state.data?.results.every(isFinal) ? false : PROVIDER_REFRESH_MS,
  });
}

/** The numeric id at the end of an API URL such as …/ingest/requests/12/. */
export function idFromUrl(url: string | null): number | null {
  const match = url ? /\/(\d+)\/?$/.exec(url) : null;
  return match ? Number(match[1]) : null;
}
