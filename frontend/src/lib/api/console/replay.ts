import { apiFetch } from '../client';
import type { ReplayBody, ReplayResult } from '../types';

/** POST /api/v1/console/dead-letter/replay/: dead letters by id per kind, or by a filter. */
export function replayDeadLetters(body: ReplayBody) {
  return apiFetch<ReplayResult>('/api/v1/console/dead-letter/replay/', {
    method: 'POST',
    json: body,
  });
}
