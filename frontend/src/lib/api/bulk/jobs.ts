import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import { LIVE_REFRESH_MS } from '../live';
import type { BulkDryRun, BulkJob, BulkJobKind, Page } from '../types';
import { bulkKeys } from './keys';

const URL = '/api/v1/console/bulk/';

/** GET /api/v1/console/bulk/: the jobs, newest first, with their progress. */
export function bulkJobsQuery(cursor: string | null) {
  return queryOptions({
    queryKey: bulkKeys.list(cursor),
    queryFn: ({ signal }) =>
      apiFetch<Page<BulkJob>>(URL, { params: { cursor, limit: 20 }, signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
}

/** What a new job takes: the granule list's filters, pasted ids, or an uploaded file. */
export interface BulkJobAsk {
  kind: BulkJobKind;
  query?: Record<string, string>;
  ids?: (number | string)[];
  file?: File;
  reason: string;
  target_group?: string;
}

function body(ask: BulkJobAsk, dryRun: boolean) {
  if (ask.file) {
    const form = new FormData();
    form.set('kind', ask.kind);
    form.set('reason', ask.reason);
    form.set('dry_run', String(dryRun));
    if (ask.target_group) form.set('target_group', ask.target_group);
    form.set('file', ask.file);
    return { body: form };
  }
  // undefined keys are left out of the JSON: one of query or ids is sent
  const { kind, query, ids, reason, target_group } = ask;
  return { json: { kind, query, ids, reason, target_group, dry_run: dryRun } };
}

/** POST /api/v1/console/bulk/ with dry_run: how many granules and bytes; nothing is made. */
export function dryRunBulkJob(ask: BulkJobAsk) {
  return apiFetch<BulkDryRun>(URL, { method: 'POST', ...body(ask, true) });
}

/** POST /api/v1/console/bulk/: make the job; it starts at once. */
export function createBulkJob(ask: BulkJobAsk) {
  return apiFetch<BulkJob>(URL, { method: 'POST', ...body(ask, false) });
}
