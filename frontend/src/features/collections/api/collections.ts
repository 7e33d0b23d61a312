import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';

export type CollectionAccess = 'public' | 'restricted';

/** A collection (ESDT) as GET /api/v1/collections/ returns it. */
export interface Collection {
  id: number;
  /** short_name.version, e.g. MOD021KM.061; the collection's public identifier. */
  key: string;
  short_name: string;
  version: string;
  title: string;
  description: string;
  processing_level: string;
  platform: string;
  instrument: string;
  access: CollectionAccess;
  file_patterns: string[];
  duplicate_policy: string;
  granule_count: number;
  created_at: string;
  updated_at: string;
}

export interface CollectionListParams {
  /** Free text over name, title, description, platform and instrument. */
  q?: string;
  /** Opaque cursor from a `next`/`previous` link. */
  cursor?: string | null;
  processing_level?: string;
  platform?: string;
  instrument?: string;
  /** Page size (the API's default is 50). */
  limit?: number;
}

export function collectionsQuery({ q = '', cursor = null, ...facets }: CollectionListParams = {}) {
  const text = q.trim();
  return queryOptions({
    queryKey: ['collections', 'list', { q: text, cursor, ...facets }] as const,
    queryFn: ({ signal }) =>
      apiFetch<Page<Collection>>('/api/v1/collections/', {
        params: { q: text, cursor, ...facets },
        signal,
      }),
    // Keep the old rows on screen while a new filter loads instead of flashing a spinner.
    placeholderData: keepPreviousData,
  });
}
