import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';
import type { Granule, GranuleFile } from '../../search/api/granules';

export interface TapeCopy {
  copy_number: number;
  volume: string;
  silo: string;
  state: string;
}

export interface StoredFile extends GranuleFile {
  in_cache: boolean;
  tape_copies: TapeCopy[];
}

/** One granule as GET /api/v1/granules/{id}/ answers: its files with where they are stored. */
export interface GranuleDetail extends Omit<Granule, 'files'> {
  files: StoredFile[];
  /** Where the browse image downloads from, or null when the granule has none. */
  browse_url: string | null;
}

export function granuleQuery(id: number) {
  return queryOptions({
    queryKey: ['granules', 'detail', id] as const,
    queryFn: ({ signal }) => apiFetch<GranuleDetail>(`/api/v1/granules/${id}/`, { signal }),
  });
}
