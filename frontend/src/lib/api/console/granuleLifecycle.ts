import { apiFetch } from '../client';
import type { ConsoleGranulePage } from '../types';

export type LifecycleAction = 'withdraw' | 'restore' | 'delete';

/**
 * POST /api/v1/console/granules/ID/{withdraw,restore,delete}/ with the operator's reason; a
 * delete also sends the granule id typed again. Answers the granule's page after the change.
 */
export function changeGranule(
  id: number,
  action: LifecycleAction,
  reason: string,
  confirmGranuleId?: string,
) {
  const json =
    action === 'delete' ? { reason, confirm_granule_id: confirmGranuleId ?? '' } : { reason };
  return apiFetch<ConsoleGranulePage>(`/api/v1/console/granules/${id}/${action}/`, {
    method: 'POST',
    json,
  });
}
