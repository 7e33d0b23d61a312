import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { CompletenessDay } from '../types';
import { completenessKeys } from './keys';

/** GET /api/v1/completeness/?collection=&day=: one UTC day of a collection with a cadence. */
export function completenessDayQuery(collection: string, day: string) {
  return queryOptions({
    queryKey: completenessKeys.day(collection, day),
    queryFn: ({ signal }) =>
      apiFetch<CompletenessDay>('/api/v1/completeness/', { signal, params: { collection, day } }),
    enabled: collection !== '' && day !== '',
  });
}
