import { apiFetch } from '../client';
import type { RepairResult } from '../types';

/** POST /api/v1/archive/reconciliation/ID/repair/: repair the named discrepancies, or all. */
export function repairReconciliation(runId: number, ids?: number[]) {
  return apiFetch<RepairResult>(`/api/v1/archive/reconciliation/${runId}/repair/`, {
    method: 'POST',
    json: ids ? { ids } : {},
  });
}
