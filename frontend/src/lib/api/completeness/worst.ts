import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { CompletenessWorst } from '../types';
import { completenessKeys } from './keys';

/** GET /api/v1/completeness/worst/?days=: collections missing the most granules lately. */
export function worstCollectionsQuery(days: number) {
  return queryOptions({
    queryKey: completenessKeys.worst(days),
    queryFn: ({ signal }) =>
      apiFetch<CompletenessWorst>('/api/v1/completeness/worst/', {
        signal,
        params: { days, limit: 5 },
      }),
  });
}
