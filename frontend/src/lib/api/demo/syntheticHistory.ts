import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { SyntheticHistory } from '../types';
import { demoKeys } from './keys';

/** GET /api/v1/demo/synthetic-history/: which part of the dashboards' history is made up. */
export function syntheticHistoryQuery() {
  return queryOptions({
    queryKey: demoKeys.syntheticHistory(),
    queryFn: ({ signal }) =>
      apiFetch<SyntheticHistory>('/api/v1/demo/synthetic-history/', { signal }),
    staleTime: 5 * 60_000,
  });
}
