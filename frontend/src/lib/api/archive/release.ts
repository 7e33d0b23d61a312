import { apiFetch } from '../client';
import type { Released } from '../types';

/**
 * POST /api/v1/archive/cache/release/: drop files' cache copies now (they stay on their tape
 * or object copies). Answers what was released, the bytes freed and what the cache kept, with
 * why; a 409 (ApiError) when it could release none, its detail giving every reason.
 */
export function releaseCached(files: number[]) {
  return apiFetch<Released>('/api/v1/archive/cache/release/', { method: 'POST', json: { files } });
}
