import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { Page, ReconcileRequest, Reconciliation } from '../types';
import { archiveKeys } from './keys';

/** GET /api/v1/archive/reconciliation/: the latest run with its discrepancies. */
export function latestReconciliationQuery() {
  return queryOptions({
    queryKey: archiveKeys.reconciliation(),
    queryFn: ({ signal }) =>
      apiFetch<Page<Reconciliation>>('/api/v1/archive/reconciliation/', {
        params: { limit: 1 },
        signal,
      }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

/** POST /api/v1/archive/reconciliation/: run one in the archive worker (202, the new run). */
export function startReconciliation(body: ReconcileRequest) {
  return apiFetch<Reconciliation>('/api/v1/archive/reconciliation/', {
    method: 'POST',
    json: body,
  });
}
