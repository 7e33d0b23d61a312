import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page, type QueryParams } from '../../../lib/api';

/** Where a granule's bytes are: every file on disk now, or some only on tape. */
export type Residency = 'cache' | 'tape';

export type FileRole = 'data' | 'metadata' | 'browse' | 'qa';

export interface GranuleFile {
  id: number;
  name: string;
  role: FileRole;
  size: number;
  checksum_type: string;
  checksum: string;
}

/** [west, south, east, north] in degrees; west > east crosses the antimeridian. */
export type BBox = [number, number, number, number];

/** A granule as GET /api/v1/granules/ lists it. */
export interface Granule {
  id: number;
  /** Collection key, e.g. MOD021KM.061. */
  collection: string;
  granule_id: string;
  version: number;
  state: string;
  temporal_start: string;
  temporal_end: string;
  bbox: BBox | null;
  attributes: Record<string, unknown>;
  total_size: number;
  residency: Residency;
  files: GranuleFile[];
  replaces: number | null;
  created_at: string;
  archived_at: string | null;
}

/** GET /api/v1/granules/ with the search's query parameters (see searchState.ts). */
export function granulesQuery(params: QueryParams, enabled = true) {
  return queryOptions({
    queryKey: ['granules', 'list', params] as const,
    queryFn: ({ signal }) => apiFetch<Page<Granule>>('/api/v1/granules/', { params, signal }),
    placeholderData: keepPreviousData,
    enabled,
  });
}
