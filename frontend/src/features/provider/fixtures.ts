/** Test data for the provider pages (used by the Vitest files only). */
import { http, HttpResponse } from 'msw';

import type {
  IngestGranuleRow,
  IngestRequest,
  IngestRequestDetail,
  Me,
  Pdr,
} from '../../lib/api/types';
import { server } from '../../test/server';

export const modaps: Me = {
  authenticated: true,
  username: 'modaps',
  email: 'modaps@example.org',
  role: 'provider',
  roles: ['provider'],
  providers: ['MODAPS'],
};

export function asProvider() {
  server.use(http.get('/api/v1/me/', () => HttpResponse.json(modaps)));
}

export function ingestRequest(overrides: Partial<IngestRequest> = {}): IngestRequest {
  return {
    id: 12,
    url: 'http://testserver/api/v1/ingest/requests/12/',
    provider: 'MODAPS',
    way: 'bulk',
    label: 'day 325',
    state: 'running',
    granule_count: 3,
    archived_count: 1,
    failed_count: 1,
    bytes_total: 3_000_000,
    bytes_done: 2_000_000,
    percent_done: 66.67,
    pdr: null,
    created_at: '2026-11-22T01:00:00Z',
    updated_at: '2026-11-22T01:02:00Z',
    finished_at: null,
    ...overrides,
  };
}

export function granuleRow(
  position: number,
  overrides: Partial<IngestGranuleRow> = {},
): IngestGranuleRow {
  return {
    position,
    collection: 'MOD021KM.061',
    granule_id: `MOD021KM.A2026325.${String(position).padStart(4, '0')}.061.2026326101512`,
    state: 'archived',
    disposition: '',
    reason: '',
    bytes_total: 1_000_000,
    bytes_done: 1_000_000,
    catalog_granule: 100 + position,
    attempts: 1,
    updated_at: '2026-11-22T01:02:00Z',
    archived_at: '2026-11-22T01:02:00Z',
    status: 'Archived: every copy is written and verified.',
    stopped: false,
    actions: [],
    ...overrides,
  };
}

export function requestDetail(overrides: Partial<IngestRequestDetail> = {}): IngestRequestDetail {
  return {
    ...ingestRequest(),
    counts: { archived: 1, failed: 1, archiving: 1 },
    granules: [
      granuleRow(0),
      granuleRow(1, {
        state: 'failed',
        disposition: 'CHECKSUM VERIFICATION FAILURE',
        reason:
          'MD5 of MOD021KM.A2026325.0001.061.2026326101512.hdf is 0f3a…, not the declared 9b2c…',
        bytes_done: 0,
        attempts: 2,
        archived_at: null,
        status:
          'Stopped: MD5 of MOD021KM.A2026325.0001.061.2026326101512.hdf is 0f3a…, not the ' +
          'declared 9b2c…. Next: retry it once the cause is fixed.',
        stopped: true,
        actions: [
          { action: 'retry', possible: true, reason: 'check its staged files again' },
          { action: 'redeliver', possible: true, reason: 'submit it in a new request' },
        ],
      }),
      granuleRow(2, {
        state: 'archiving',
        bytes_done: 1_000_000,
        archived_at: null,
        status: 'Waiting for copy 1 of MOD021KM.A2026325.0002.061.2026326101512.hdf to be written.',
      }),
    ],
    ...overrides,
  };
}

export function pdr(overrides: Partial<Pdr> = {}): Pdr {
  return {
    id: 5,
    url: 'http://testserver/api/v1/ingest/pdrs/5/',
    provider: 'MODAPS',
    name: 'MODAPS.2026325.PDR',
    path: 'pdrs/MODAPS.2026325.PDR',
    state: 'answered',
    disposition: 'CHECKSUM VERIFICATION FAILURE',
    detail: '',
    request: 'http://testserver/api/v1/ingest/requests/12/',
    pdrd: '',
    pan: [
      'MESSAGE_TYPE = LONGPAN;',
      'NO_OF_FILES = 2;',
      'FILE_DIRECTORY = /modaps/325;',
      'FILE_NAME = MOD021KM.A2026325.0000.061.2026326101512.hdf;',
      'DISPOSITION = "SUCCESSFUL";',
      'TIME_STAMP = 2026-11-22T01:03:00Z;',
      'FILE_DIRECTORY = /modaps/325;',
      'FILE_NAME = MOD021KM.A2026325.0001.061.2026326101512.hdf;',
      'DISPOSITION = "CHECKSUM VERIFICATION FAILURE";',
      'TIME_STAMP = 2026-11-22T01:03:00Z;',
      '',
    ].join('\n'),
    created_at: '2026-11-22T01:00:00Z',
    updated_at: '2026-11-22T01:03:00Z',
    ...overrides,
  };
}
