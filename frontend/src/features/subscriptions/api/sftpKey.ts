import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

/** Granary's public key: users add it to authorized_keys on their SFTP server. */
export interface SftpKey {
  public_key: string;
  fingerprint: string;
}

/** GET /api/v1/destinations/sftp-key/ */
export function sftpKeyQuery() {
  return queryOptions({
    queryKey: ['sftp-key'] as const,
    queryFn: ({ signal }) => apiFetch<SftpKey>('/api/v1/destinations/sftp-key/', { signal }),
    staleTime: Infinity,
  });
}
