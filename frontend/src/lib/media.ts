import type { Medium } from './api/types';

/** How the pages name each kind of storage a copy can lie on. */
export const MEDIUM_NAMES: Record<Medium, string> = {
  tape: 'tape',
  object: 'object store',
};
