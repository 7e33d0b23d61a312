import type { DeadLetterKind, FailureWhere } from '../types';

export interface FailureGroupFilters {
  where?: FailureWhere | '';
  collection?: string;
  since?: string;
}

export interface DeadLetterParams {
  kind?: DeadLetterKind | '';
  limit?: number;
  offset?: number;
}

/** The operator's granule filter as the console's URL and API take it (names: FILTER_FIELDS). */
export const GRANULE_FILTERS = [
  'granule_id',
  'collection',
  'provider',
  'state',
  'created_from',
  'created_to',
  'archived_from',
  'archived_to',
  'start',
  'end',
] as const;

export type GranuleFilterName = (typeof GRANULE_FILTERS)[number];
export type GranuleFilters = Partial<Record<GranuleFilterName, string>>;

/** Cache keys of the operator's console: one root, so an action on one list (a retry, a
 * withdrawal) refreshes every other. */
export const consoleKeys = {
  all: ['console'] as const,
  failureGroups: (filters: FailureGroupFilters) =>
    [...consoleKeys.all, 'failure-groups', filters] as const,
  deadLetters: (params: DeadLetterParams) => [...consoleKeys.all, 'dead-letter', params] as const,
  granules: () => [...consoleKeys.all, 'granules'] as const,
  granuleList: (filters: GranuleFilters, cursor: string | null) =>
    [...consoleKeys.granules(), 'list', filters, { cursor }] as const,
  granuleCounts: (filters: GranuleFilters) =>
    [...consoleKeys.granules(), 'counts', filters] as const,
  granule: (id: number) => [...consoleKeys.granules(), 'detail', id] as const,
  ingestFailures: (filters: GranuleFilters, cursor: string | null) =>
    [...consoleKeys.granules(), 'ingest-failures', filters, { cursor }] as const,
};
