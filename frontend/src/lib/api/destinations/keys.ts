/** Cache keys of the user's push destinations and Granary's own SFTP key. */
export const destinationKeys = {
  all: ['destinations'] as const,
  list: () => [...destinationKeys.all, 'list'] as const,
  sftpKey: () => [...destinationKeys.all, 'sftp-key'] as const,
};
