export interface IngestRequestListParams {
  /** Opaque cursor from a `next`/`previous` link. */
  cursor?: string | null;
  /** Page size (the API's default is 50). */
  limit?: number;
}

/** Cache keys of ingest requests and PDRs, whoever looks at them (provider or operator). */
export const ingestKeys = {
  all: ['ingest'] as const,
  requests: () => [...ingestKeys.all, 'requests'] as const,
  requestList: (params: IngestRequestListParams) =>
    [...ingestKeys.requests(), 'list', params] as const,
  /** `state` narrows the granules listed ('' for all of them). */
  request: (id: number, state: string) =>
    [...ingestKeys.requests(), 'detail', id, { state }] as const,
  pdrs: () => [...ingestKeys.all, 'pdrs'] as const,
  pdrList: (cursor: string | null) => [...ingestKeys.pdrs(), 'list', { cursor }] as const,
  pdr: (id: number) => [...ingestKeys.pdrs(), 'detail', id] as const,
};
