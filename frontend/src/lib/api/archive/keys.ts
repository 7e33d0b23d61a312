/** Cache keys of the archive tier (operators): one root, so a change refreshes the board. */
export const archiveKeys = {
  all: ['archive'] as const,
  buckets: () => [...archiveKeys.all, 'buckets'] as const,
  bucketBoard: () => [...archiveKeys.all, 'bucket-board'] as const,
  cache: () => [...archiveKeys.all, 'cache'] as const,
  drives: () => [...archiveKeys.all, 'drives'] as const,
  queues: () => [...archiveKeys.all, 'queues'] as const,
  reconciliation: () => [...archiveKeys.all, 'reconciliation'] as const,
  volumes: () => [...archiveKeys.all, 'volumes'] as const,
  volumeGroups: () => [...archiveKeys.all, 'volume-groups'] as const,
  requests: (filters: { state: string; kind: string }) =>
    [...archiveKeys.all, 'requests', filters] as const,
};
