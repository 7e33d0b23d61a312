import type { ConsoleGranule, ConsoleGranulePage } from '../../lib/api/types';

export function consoleGranule(overrides: Partial<ConsoleGranule> = {}): ConsoleGranule {
  return {
    id: 7,
    granule_id: 'MOD09.A2026001.0000',
    version: 1,
    collection: 'MOD09.061',
    provider: 'MODAPS',
    state: 'archived',
    failure: null,
    temporal_start: '2026-01-01T00:00:00Z',
    temporal_end: '2026-01-01T00:05:00Z',
    total_size: 3500,
    created_at: '2026-11-20T10:00:00Z',
    archived_at: '2026-11-20T10:02:00Z',
    updated_at: '2026-11-20T10:02:00Z',
    ...overrides,
  };
}

export function granulePage(overrides: Partial<ConsoleGranule> = {}): ConsoleGranulePage {
  const granule = consoleGranule(overrides);
  return {
    granule,
    retired_reason: null,
    failure: null,
    actions: [],
    files: [
      {
        id: 70,
        name: 'MOD09.A2026001.0000.hdf',
        role: 'data',
        size: 3000,
        checksum_type: 'MD5',
        checksum: 'abc',
        cache: {
          state: 'clean',
          pinned: false,
          size: 3000,
          created_at: '2026-11-20T10:00:01Z',
          last_access: '2026-11-20T10:00:01Z',
          keep_until: null,
        },
        copies: [
          {
            id: 1,
            copy_number: 1,
            segment: 0,
            medium: 'tape',
            volume: 'A00001',
            volume_group: 'primary',
            volume_state: 'filling',
            position: 1536,
            bucket: null,
            key: null,
            etag: null,
            length: 3000,
            state: 'verified',
            written_at: '2026-11-20T10:01:00Z',
            verified_at: '2026-11-20T10:01:30Z',
          },
          {
            id: 2,
            copy_number: 2,
            segment: 0,
            medium: 'tape',
            volume: 'B00001',
            volume_group: 'backup',
            volume_state: 'filling',
            position: 1536,
            bucket: null,
            key: null,
            etag: null,
            length: 3000,
            state: 'verified',
            written_at: '2026-11-20T10:01:10Z',
            verified_at: '2026-11-20T10:01:40Z',
          },
        ],
      },
    ],
    timeline: [
      {
        at: '2026-11-20T10:00:00Z',
        kind: 'ingest',
        text: 'received in ingest request 3 (bulk, MODAPS)',
        actor: '',
        reason: '',
      },
      {
        at: '2026-11-20T10:01:30Z',
        kind: 'copy',
        text: 'MOD09.A2026001.0000.hdf copy 1 on A00001 verified',
        actor: '',
        reason: '',
      },
    ],
  };
}
