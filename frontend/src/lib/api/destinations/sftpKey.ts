import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { SftpKey } from '../types';
import { destinationKeys } from './keys';

/** GET /api/v1/destinations/sftp-key/: the line users add to authorized_keys on their server. */
export function sftpKeyQuery() {
  return queryOptions({
    queryKey: destinationKeys.sftpKey(),
    queryFn: ({ signal }) => apiFetch<SftpKey>('/api/v1/destinations/sftp-key/', { signal }),
    staleTime: Infinity,
  });
}
