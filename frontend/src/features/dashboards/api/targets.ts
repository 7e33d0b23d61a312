import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

/** Daily targets in TB. */
export interface Targets {
  ingest: number;
  distribution: number;
}

export function targetsQuery() {
  return queryOptions({
    queryKey: ['metrics', 'targets'] as const,
    queryFn: ({ signal }) => apiFetch<Targets>('/api/v1/metrics/targets/', { signal }),
  });
}

/** PUT /api/v1/metrics/targets/ */
export function saveTargets(targets: Partial<Targets>) {
  return apiFetch<Targets>('/api/v1/metrics/targets/', { method: 'PUT', json: targets });
}
