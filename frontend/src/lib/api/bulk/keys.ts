/** Cache keys of the console's bulk jobs: one root, so a new job or a cancel refreshes all. */
export const bulkKeys = {
  all: ['bulk-jobs'] as const,
  list: (cursor: string | null) => [...bulkKeys.all, 'list', cursor] as const,
  job: (id: number) => [...bulkKeys.all, 'job', id] as const,
  itemsOf: (id: number) => [...bulkKeys.all, 'items', id] as const,
  items: (id: number, state: string, cursor: string | null) =>
    [...bulkKeys.itemsOf(id), state, cursor] as const,
};
