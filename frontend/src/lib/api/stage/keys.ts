/** Cache keys of the Tape REST API's stage requests as Granary's own API lists them. */
export const stageKeys = {
  all: ['stage-requests'] as const,
  list: (cursor: string | null) => [...stageKeys.all, 'list', { cursor }] as const,
};
