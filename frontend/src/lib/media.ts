import type { Medium } from './api/types';

/** How the pages name each kind of storage a copy can lie on. */
export const MEDIUM_NAMES: Record<Medium, string> = {
  tape: 'tape',
  object: 'object store',
};

/** A copy's place in words: "tape · V00012 in silo1", "object store · bucket archive-s3". */
export function copyPlace(copy: {
  medium: Medium;
  volume?: string | null;
  silo?: string | null;
  bucket?: string | null;
}): string {
  if (copy.medium === 'object') return `${MEDIUM_NAMES.object} · bucket ${copy.bucket ?? '?'}`;
  return `${MEDIUM_NAMES.tape} · ${copy.volume ?? '?'}${copy.silo ? ` in ${copy.silo}` : ''}`;
}
