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

/** Cache keys of the operator's console (failures, dead letters): one root, so an action on
 * one refreshes the other, as a retry changes both. */
export const consoleKeys = {
  all: ['console'] as const,
  failureGroups: (filters: FailureGroupFilters) =>
    [...consoleKeys.all, 'failure-groups', filters] as const,
  deadLetters: (params: DeadLetterParams) => [...consoleKeys.all, 'dead-letter', params] as const,
};
