import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { ArchiveRequest, DeadLetter, FailureGroup } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asOperator, page, server } from '../../test/server';

beforeEach(() => asOperator());

describe('queues dashboard', () => {
  it('shows pending work per volume group with oldest age and % done', async () => {
    server.use(
      http.get('/api/v1/archive/queues/', () =>
        HttpResponse.json([
          {
            kind: 'migrate',
            volume_group: 'primary',
            queued: 60,
            queued_bytes: 44e6,
            running: 2,
            running_bytes: 10e6,
            running_done_bytes: 2.5e6,
            oldest_at: '2026-11-22T00:00:00Z',
            oldest_age_s: 3720,
            running_percent_done: 25,
          },
          {
            kind: 'recall',
            volume_group: 'backup',
            queued: 1,
            queued_bytes: 1e6,
            running: 0,
            running_bytes: 0,
            running_done_bytes: 0,
            oldest_at: '2026-11-22T00:00:00Z',
            oldest_age_s: 12,
            running_percent_done: null,
          },
        ]),
      ),
    );
    renderApp('/dashboards/queues');

    const migrate = await screen.findByRole('row', { name: /migrate · primary/ });
    expect(
      within(migrate)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['60', '44.0 MB', '2', '1 h 2 min', '25 %']);
    expect(within(migrate).getByRole('progressbar')).toHaveAttribute('value', '25');
    expect(screen.getByRole('row', { name: /recall · backup/ })).toHaveTextContent('none running');
  });

  it('says when nothing waits, and shows API errors', async () => {
    server.use(http.get('/api/v1/archive/queues/', () => HttpResponse.json([])));
    renderApp('/dashboards/queues');
    expect(await screen.findByText('Nothing is waiting')).toBeInTheDocument();
  });
});

function failed(id: number, overrides: Partial<ArchiveRequest> = {}): ArchiveRequest {
  return {
    id,
    kind: 'migrate',
    state: 'failed',
    priority: 2,
    file: id,
    file_name: `f${id}.hdf`,
    copy_number: 1,
    volume_group: 'primary',
    volume: 'A00001',
    bucket: null,
    drive: null,
    bytes_total: 1e6,
    bytes_done: 0,
    percent_done: 0,
    attempts: 3,
    error: `checksum mismatch on f${id}.hdf`,
    created_at: '2026-11-22T00:00:00Z',
    started_at: null,
    finished_at: '2026-11-22T00:05:00Z',
    actions: [{ action: 'retry', possible: true, reason: 'queue it again' }],
    ...overrides,
  };
}

describe('failures dashboard', () => {
  let bulk: unknown[];

  beforeEach(() => {
    bulk = [];
    server.use(
      http.get('/api/v1/console/failures/groups/', () => HttpResponse.json([])),
      http.get('/api/v1/console/dead-letter/', () =>
        HttpResponse.json({ count: 0, next: null, previous: null, results: [] }),
      ),
      http.get('/api/v1/archive/reconciliation/', () => HttpResponse.json(page([]))),
      http.get('/api/v1/archive/requests/', ({ request }) => {
        const params = new URL(request.url).searchParams;
        expect(params.get('state')).toBe('failed');
        const rows = [failed(7), failed(8), failed(9, { kind: 'recall' })];
        const kind = params.get('kind');
        return HttpResponse.json(page(kind ? rows.filter((r) => r.kind === kind) : rows));
      }),
      http.post('/api/v1/archive/requests/bulk/', async ({ request }) => {
        const body = (await request.json()) as { action: string; ids?: number[] };
        bulk.push(body);
        return HttpResponse.json({ action: body.action, count: body.ids?.length ?? 3 });
      }),
      http.get('/api/v1/ingest/requests/', () =>
        HttpResponse.json(
          page([
            {
              id: 3,
              url: '',
              provider: 'MODAPS',
              way: 'api',
              label: 'batch 3',
              state: 'partial',
              granule_count: 5,
              archived_count: 3,
              failed_count: 2,
              bytes_total: 0,
              bytes_done: 0,
              percent_done: 60,
              created_at: '2026-11-22T00:00:00Z',
              updated_at: '2026-11-22T00:00:00Z',
              finished_at: null,
            },
            {
              id: 4,
              url: '',
              provider: 'MODAPS',
              way: 'api',
              label: '',
              state: 'done',
              granule_count: 5,
              archived_count: 5,
              failed_count: 0,
              bytes_total: 0,
              bytes_done: 0,
              percent_done: 100,
              created_at: '2026-11-22T00:00:00Z',
              updated_at: '2026-11-22T00:00:00Z',
              finished_at: null,
            },
          ]),
        ),
      ),
    );
  });

  it('lists failed archive requests with their errors and retries one', async () => {
    renderApp('/dashboards/failures');

    const row = await screen.findByRole('row', { name: /#7 migrate/ });
    expect(row).toHaveTextContent('checksum mismatch on f7.hdf');
    await userEvent.click(within(row).getByRole('button', { name: 'Retry request 7' }));

    expect(await screen.findByText('Retried 1 request.')).toBeInTheDocument();
    expect(bulk).toEqual([{ action: 'retry', ids: [7] }]);
  });

  it('retries or cancels a selection, and everything matching the kind filter', async () => {
    renderApp('/dashboards/failures');

    await userEvent.click(await screen.findByRole('checkbox', { name: 'Select request 7' }));
    await userEvent.click(screen.getByRole('checkbox', { name: 'Select request 8' }));
    await userEvent.click(screen.getByRole('button', { name: 'Cancel selected (2)' }));
    expect(await screen.findByText('Cancelled 2 requests.')).toBeInTheDocument();

    await userEvent.selectOptions(screen.getByLabelText('Kind'), 'recall');
    await waitFor(() =>
      expect(screen.queryByRole('row', { name: /#7 migrate/ })).not.toBeInTheDocument(),
    );
    await userEvent.click(screen.getByRole('button', { name: 'Retry all failed recall requests' }));
    await screen.findByText('Retried 3 requests.');

    expect(bulk).toEqual([
      { action: 'cancel', ids: [7, 8] },
      { action: 'retry', all: true, kind: 'recall' },
    ]);
  });

  it('shows the API’s words when a bulk action is refused', async () => {
    server.use(
      http.post('/api/v1/archive/requests/bulk/', () =>
        HttpResponse.json({ detail: 'name the requests (ids) or ask for all' }, { status: 400 }),
      ),
    );
    renderApp('/dashboards/failures');

    await userEvent.click(await screen.findByRole('button', { name: 'Retry all failed requests' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'name the requests (ids) or ask for all',
    );
  });

  it('shows ingest requests with failed granules, their reasons, and retries them', async () => {
    let retried: unknown[] = [];
    server.use(
      http.get('/api/v1/ingest/requests/3/', ({ request }) => {
        expect(new URL(request.url).searchParams.get('state')).toBe('failed');
        return HttpResponse.json({
          id: 3,
          failed_count: 2,
          counts: { failed: 2, archived: 3 },
          granules: [
            {
              position: 1,
              collection: 'MOD021KM.061',
              granule_id: 'G1',
              state: 'failed',
              disposition: 'CHECKSUM VERIFICATION FAILURE',
              reason: 'md5 of G1.hdf is abc, the request said def',
              attempts: 1,
              updated_at: '',
            },
            {
              position: 4,
              collection: 'MOD021KM.061',
              granule_id: 'G4',
              state: 'failed',
              disposition: 'FILE I/O ERROR',
              reason: 'G4.hdf is missing from staging',
              attempts: 1,
              updated_at: '',
            },
          ],
        });
      }),
      http.post('/api/v1/ingest/requests/3/retry/', async ({ request }) => {
        const body = (await request.json()) as { positions?: number[] };
        retried.push(body);
        return HttpResponse.json({ id: 3, retried: body.positions?.length ?? 2 }, { status: 202 });
      }),
    );
    renderApp('/dashboards/failures');

    expect(await screen.findByText('2 of 5 granules failed', { exact: false })).toBeInTheDocument();
    expect(screen.queryByText(/Request #4/)).not.toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: /Request #3/ }));
    const g4 = await screen.findByRole('row', { name: /G4/ });
    expect(g4).toHaveTextContent('G4.hdf is missing from staging');
    expect(g4).toHaveTextContent('FILE I/O ERROR');

    await userEvent.click(within(g4).getByRole('checkbox'));
    await userEvent.click(screen.getByRole('button', { name: 'Retry selected granules (1)' }));
    expect(await screen.findByText('Sent 1 granule round again.')).toBeInTheDocument();

    await userEvent.click(
      screen.getByRole('button', { name: 'Retry every failed granule of request 3' }),
    );
    expect(await screen.findByText('Sent 2 granules round again.')).toBeInTheDocument();
    expect(retried).toEqual([{ positions: [4] }, {}]);
    retried = [];
  });
});

const CHECKSUMS: FailureGroup = {
  key: '0123456789abcdef0123',
  where: 'ingest',
  kind: 'granule',
  pattern: '<name>: MD5 checksum is <hex>, the provider declared <hex>',
  example: 'G8.dat: MD5 checksum is 0cc1, the provider declared d41d',
  actions: [{ action: 'retry', possible: true, reason: 'check its staged files again' }],
  count: 5,
  collections: [
    { key: 'MOD021KM.061', count: 4 },
    { key: 'MOD09GA.061', count: 1 },
  ],
  first_seen: '2026-11-22T00:00:00Z',
  last_seen: '2026-11-22T01:00:00Z',
};

const DAMAGED: FailureGroup = {
  ...CHECKSUMS,
  key: 'fedcba9876543210fedc',
  where: 'archive',
  kind: 'migrate',
  pattern: 'the cached copy of <name> does not match its catalog checksum',
  example: 'the cached copy of a.dat does not match its catalog checksum',
  count: 2,
  collections: [],
};

describe('failures grouped by reason', () => {
  let retried: unknown[];

  beforeEach(() => {
    retried = [];
    server.use(
      http.get('/api/v1/console/failures/groups/', ({ request }) => {
        const where = new URL(request.url).searchParams.get('where');
        const groups = [CHECKSUMS, DAMAGED];
        return HttpResponse.json(where ? groups.filter((g) => g.where === where) : groups);
      }),
      http.post('/api/v1/console/failures/groups/retry/', async ({ request }) => {
        const body = (await request.json()) as { key: string };
        retried.push(body);
        const group = body.key === CHECKSUMS.key ? CHECKSUMS : DAMAGED;
        return HttpResponse.json(
          {
            key: group.key,
            where: group.where,
            kind: group.kind,
            pattern: group.pattern,
            matched: group.count,
            retried: group === CHECKSUMS ? 5 : 1,
            not_retried:
              group === CHECKSUMS
                ? []
                : [{ id: 12, reason: 'superseded: the same work is queued already' }],
          },
          { status: 202 },
        );
      }),
      http.get('/api/v1/console/dead-letter/', () =>
        HttpResponse.json({ count: 0, next: null, previous: null, results: [] }),
      ),
      http.get('/api/v1/archive/reconciliation/', () => HttpResponse.json(page([]))),
      http.get('/api/v1/archive/requests/', () => HttpResponse.json(page([]))),
      http.get('/api/v1/ingest/requests/', () => HttpResponse.json(page([]))),
    );
  });

  it('shows each group once with its count, place, collections and an example', async () => {
    renderApp('/dashboards/failures');

    const row = await screen.findByRole('row', { name: /MD5 checksum is <hex>/ });
    const cells = within(row)
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells.slice(0, 2)).toEqual(['ingest · granule', '5']);
    expect(
      within(row)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['MOD021KM.061 (4)', 'MOD09GA.061 (1)']);
    expect(row).toHaveTextContent('e.g. G8.dat: MD5 checksum is 0cc1, the provider declared d41d');
    expect(screen.getByRole('row', { name: /catalog checksum/ })).toHaveTextContent(
      'archive · migrate',
    );

    await userEvent.selectOptions(screen.getByLabelText('Where'), 'archive');
    await waitFor(() =>
      expect(screen.queryByRole('row', { name: /MD5 checksum/ })).not.toBeInTheDocument(),
    );
  });

  it('retries a group only once the operator confirms, and says what happened', async () => {
    renderApp('/dashboards/failures');

    const row = await screen.findByRole('row', { name: /MD5 checksum is <hex>/ });
    await userEvent.click(within(row).getByRole('button', { name: /^Retry 5/ }));
    const confirm = within(row).getByRole('group', { name: 'Confirm retrying' });
    expect(confirm).toHaveTextContent('Send 5 granules round again?');
    await userEvent.click(within(confirm).getByRole('button', { name: 'Keep' }));
    expect(retried).toEqual([]);

    await userEvent.click(within(row).getByRole('button', { name: /^Retry 5/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Yes, retry' }));
    expect(await screen.findByText('Sent 5 granules round again.')).toBeInTheDocument();
    expect(retried).toEqual([{ key: CHECKSUMS.key }]);

    const damaged = screen.getByRole('row', { name: /catalog checksum/ });
    await userEvent.click(within(damaged).getByRole('button', { name: /^Retry 2/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Yes, retry' }));
    expect(
      await screen.findByText(
        'Sent 1 migrate request round again; not retried: #12: superseded: the same work is queued already.',
      ),
    ).toBeInTheDocument();
  });

  it('shows the API’s words when a retry is refused', async () => {
    server.use(
      http.post('/api/v1/console/failures/groups/retry/', () =>
        HttpResponse.json(
          { detail: 'No failed work has this group key now (it may have been retried already).' },
          { status: 404 },
        ),
      ),
    );
    renderApp('/dashboards/failures');

    const row = await screen.findByRole('row', { name: /MD5 checksum is <hex>/ });
    await userEvent.click(within(row).getByRole('button', { name: /^Retry 5/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Yes, retry' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('it may have been retried already');
  });
});

function dead(
  kind: DeadLetter['kind'],
  id: number,
  overrides: Partial<DeadLetter> = {},
): DeadLetter {
  return {
    kind,
    id,
    label: `${kind} #${id}`,
    reason: 'the mover stopped before finishing; requeued',
    attempts: 5,
    max_attempts: 5,
    collection: 'MOD021KM.061',
    at: '2026-11-22T00:00:00Z',
    ...overrides,
  };
}

describe('dead letters', () => {
  let replays: unknown[];
  let offsets: (string | null)[];

  beforeEach(() => {
    replays = [];
    offsets = [];
    server.use(
      http.get('/api/v1/console/failures/groups/', () => HttpResponse.json([])),
      http.get('/api/v1/console/dead-letter/', ({ request }) => {
        const params = new URL(request.url).searchParams;
        offsets.push(params.get('offset'));
        const rows = [
          dead('archive', 31),
          dead('ingest', 7, { attempts: 3, max_attempts: 2, reason: 'gave up after 2 attempts' }),
          dead('order_item', 4, { reason: 'push failed 5 times: not a directory' }),
        ];
        const kind = params.get('kind');
        const results = kind ? rows.filter((r) => r.kind === kind) : rows;
        return HttpResponse.json({
          count: 120,
          next: params.get('offset') === '50' ? null : 'http://x/?offset=50',
          previous: params.get('offset') === '50' ? 'http://x/?offset=0' : null,
          results,
        });
      }),
      http.post('/api/v1/console/dead-letter/replay/', async ({ request }) => {
        const body = await request.json();
        replays.push(body);
        return HttpResponse.json(
          {
            replayed: 2,
            by_kind: { archive: 1, ingest: 1 },
            not_replayed: [{ kind: 'archive', id: 9, reason: 'not a dead letter now' }],
          },
          { status: 202 },
        );
      }),
      http.get('/api/v1/archive/reconciliation/', () => HttpResponse.json(page([]))),
      http.get('/api/v1/archive/requests/', () => HttpResponse.json(page([]))),
      http.get('/api/v1/ingest/requests/', () => HttpResponse.json(page([]))),
    );
  });

  it('lists work that used up its retries and replays a selection', async () => {
    renderApp('/dashboards/failures');

    const ingest = await screen.findByRole('row', { name: /ingest #7/ });
    expect(ingest).toHaveTextContent('3 (limit 2)');
    expect(ingest).toHaveTextContent('gave up after 2 attempts');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Select archive request 31' }));
    await userEvent.click(screen.getByRole('checkbox', { name: 'Select ingest granule 7' }));
    await userEvent.click(screen.getByRole('button', { name: 'Replay selected (2)' }));

    expect(
      await screen.findByText(
        'Replayed 2 dead letters; not replayed: archive request #9: not a dead letter now.',
      ),
    ).toBeInTheDocument();
    expect(replays).toEqual([{ ids: { archive: [31], ingest: [7] } }]);
  });

  it('replays everything of a kind after a confirmation, and pages', async () => {
    renderApp('/dashboards/failures');

    await screen.findByRole('row', { name: /archive #31/ });
    await userEvent.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(offsets).toContain('50'));

    await userEvent.selectOptions(screen.getByLabelText('Dead kind'), 'ingest');
    await waitFor(() =>
      expect(screen.queryByRole('row', { name: /archive #31/ })).not.toBeInTheDocument(),
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Replay all ingest granule dead letters' }),
    );
    const confirm = screen.getByRole('group', { name: 'Confirm replaying' });
    expect(confirm).toHaveTextContent('Replay all 120 ingest granule dead letters?');
    await userEvent.click(within(confirm).getByRole('button', { name: 'Yes, replay' }));
    await screen.findByText(/Replayed 2 dead letters/);
    expect(replays).toEqual([{ kind: 'ingest' }]);
  });
});
