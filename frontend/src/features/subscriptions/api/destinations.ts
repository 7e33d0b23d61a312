import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../../../lib/api';

export type DestinationKind = 'folder' | 'sftp';

/**
 * Where push deliveries are copied: a folder under the outbox, or a directory on the user's own
 * SFTP server, which Granary logs in to with its own key after checking the pinned host key.
 */
export interface Destination {
  id: number;
  name: string;
  kind: DestinationKind;
  /** folder: under the outbox; sftp: remote directory (absolute, or from the login directory). */
  path: string;
  host: string;
  port: number;
  username: string;
  /** The pinned host key, `<type> <base64>`. */
  host_key: string;
  host_key_fingerprint: string;
  /** Where deliveries go, as a person reads it. */
  folder: string;
  created_at: string;
}

export type DestinationBody = Pick<Destination, 'name' | 'kind'> &
  Partial<Pick<Destination, 'path' | 'host' | 'port' | 'username' | 'host_key'>>;

/** GET /api/v1/destinations/ (not paged). */
export function destinationsQuery() {
  return queryOptions({
    queryKey: ['destinations'] as const,
    queryFn: ({ signal }) => apiFetch<Destination[]>('/api/v1/destinations/', { signal }),
  });
}

/** POST /api/v1/destinations/ */
export function createDestination(body: DestinationBody) {
  return apiFetch<Destination>('/api/v1/destinations/', { method: 'POST', json: body });
}
