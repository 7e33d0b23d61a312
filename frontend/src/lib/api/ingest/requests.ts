import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { IngestRequest, IngestRequestState, Page } from '../types';
import { ingestKeys, type IngestRequestListParams } from './keys';

/** Until a request is final, its figures refresh this often. */
export const PROVIDER_REFRESH_MS = 3_000;

export const FINAL_REQUEST_STATES: IngestRequestState[] = ['completed', 'failed'];

export function isFinal(request: Pick<IngestRequest, 'state'>): boolean {
  return FINAL_REQUEST_STATES.includes(request.state);
}

/**
 * GET /api/v1/ingest/requests/: newest first (a provider sees its own, an operator every
 * provider's), live while any request runs.
 */
export function ingestRequestsQuery(params: IngestRequestListParams = {}) {
  return queryOptions({
    queryKey: ingestKeys.requestList(params),
    queryFn: ({ signal }) =>
      apiFetch<Page<IngestRequest>>('/api/v1/ingest/requests/', { params: { ...params }, signal }),
    refetchInterval: (query) =>
      query.state.data?.results.every(isFinal) ? false : PROVIDER_REFRESH_MS,
  });
}

/** The numeric id at the end of an API URL such as …/ingest/requests/12/. */
export function idFromUrl(url: string | null): number | null {
  const match = url ? /\/(\d+)\/?$/.exec(url) : null;
  return match ? Number(match[1]) : null;
}
