import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { Targets, TargetsChange } from '../types';
import { metricKeys } from './keys';

/** GET /api/v1/metrics/targets/: daily targets in TB. */
export function targetsQuery() {
  return queryOptions({
    queryKey: metricKeys.targets(),
    queryFn: ({ signal }) => apiFetch<Targets>('/api/v1/metrics/targets/', { signal }),
  });
}

/** PUT /api/v1/metrics/targets/ */
export function saveTargets(targets: TargetsChange) {
  return apiFetch<Targets>('/api/v1/metrics/targets/', { method: 'PUT', json: targets });
}
