import type { BulkItemState, BulkJob, BulkJobKind } from '../../lib/api/types';
import type { Tone } from '../../components/StateBadge';

export const KINDS: { value: BulkJobKind; label: string; hint: string }[] = [
  { value: 'recall', label: 'Recall to cache', hint: 'Bring every file into the RAID cache.' },
  {
    value: 'verify',
    label: 'Re-verify',
    hint: 'Re-read every tape copy and check it against the catalog checksum.',
  },
  {
    value: 'move',
    label: 'Move copies',
    hint: 'Write the copy the policy puts on the target group there; the old copy is released.',
  },
  {
    value: 'reingest',
    label: 'Reingest',
    hint: 'Send each granule’s failed ingest round again (archived granules are skipped).',
  },
  {
    value: 'withdraw',
    label: 'Withdraw',
    hint: 'Hide from search and new orders; kept on tape.',
  },
  {
    value: 'delete',
    label: 'Delete',
    hint: 'Delete from the catalog and release the tape copies.',
  },
];

export function kindLabel(kind: BulkJobKind): string {
  return KINDS.find((k) => k.value === kind)?.label ?? kind;
}

export const JOB_TONES: Record<BulkJob['state'], Tone> = {
  queued: 'wait',
  running: 'busy',
  done: 'ok',
  failed: 'bad',
  cancelled: 'off',
};

export const ITEM_TONES: Record<BulkItemState, Tone> = {
  pending: 'wait',
  waiting: 'busy',
  done: 'ok',
  skipped: 'plain',
  failed: 'bad',
  cancelled: 'off',
};

/** What a job acts on, in a line: its filters, or how many ids it was given. */
export function selectionText(job: BulkJob): string {
  const query = job.query as Record<string, string> | null;
  if (query) {
    const parts = Object.entries(query)
      .filter(([, v]) => v)
      .map(([k, v]) => `${k}=${v}`);
    return parts.length ? parts.join(' · ') : 'every granule';
  }
  return `${job.ids_given} ids`;
}
