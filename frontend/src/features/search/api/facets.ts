import { keepPreviousData, queryOptions } from '@tanstack/react-query';

import { apiFetch, type QueryParams } from '../../../lib/api';

export interface FacetValue {
  value: string;
  count: number;
}

/** Granule counts per value, as GET /api/v1/granules/facets/ answers. */
export interface GranuleFacets {
  collection: FacetValue[];
  processing_level: FacetValue[];
  platform: FacetValue[];
  instrument: FacetValue[];
}

/** GET /api/v1/granules/facets/ for the granules the other filters select. */
export function granuleFacetsQuery(params: QueryParams) {
  return queryOptions({
    queryKey: ['granules', 'facets', params] as const,
    queryFn: ({ signal }) => apiFetch<GranuleFacets>('/api/v1/granules/facets/', { params, signal }),
    placeholderData: keepPreviousData,
  });
}
