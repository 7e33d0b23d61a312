import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { BucketFigures, Drive, Volume } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asOperator, page, server } from '../../test/server';

function drive(overrides: Partial<Drive> = {}): Drive {
  return {
    name: 'silo1-d1',
    silo: 'silo1',
    model: 'LTO-9 (emulated)',
    state: 'idle',
    mode: '',
    mounted_volume: null,
    volume_group: null,
    mounted_at: null,
    last_used_at: null,
    consecutive_errors: 0,
    error_count: 0,
    last_error: '',
    offline_reason: '',
    current_rate_b_s: 0,
    fault: {},
    ...overrides,
  };
}

function volume(label: string, state: Volume['state'], percent: number, stateReason = ''): Volume {
  return {
    label,
    silo: 'silo1',
    group: state === 'scratch' ? null : 'primary',
    media: 'LTO-9 (emulated)',
    state,
    capacity_bytes: 5e9,
    end_of_data: 2048,
    live_bytes: (percent / 100) * 5e9,
    file_count: 1,
    percent_full: percent,
    mount_count: 1,
    last_dismounted_at: null,
    mounted_on: null,
    fault: '',
    state_reason: stateReason,
  };
}

let drives: Drive[];
let buckets: BucketFigures[];

function bucket(overrides: Partial<BucketFigures> = {}): BucketFigures {
  return {
    name: 'archive-s3',
    store: 'default',
    bucket: 'granary-archive',
    prefix: 'granary/',
    objects: 1234,
    bytes: 5e9,
    work: [
      { kind: 'migrate', queued: 3, queued_bytes: 2e6, running: 1, running_bytes: 1e6 },
      { kind: 'recall', queued: 0, queued_bytes: 0, running: 0, running_bytes: 0 },
    ],
    last_hour: { puts: 40, put_bytes: 80e6, gets: 2, get_bytes: 4e6 },
    failures: { requests: 0, last_error: '', last_error_at: null },
    health: { ok: true, reason: '' },
    ...overrides,
  };
}

beforeEach(() => {
  asOperator();
  buckets = [
    bucket(),
    bucket({
      name: 'offsite',
      store: 'remote',
      bucket: 'far',
      prefix: '',
      objects: 0,
      bytes: 0,
      last_hour: { puts: 0, put_bytes: 0, gets: 0, get_bytes: 0 },
      failures: {
        requests: 5,
        last_error: 'object store remote (https://far.example) is unreachable',
        last_error_at: '2026-11-27T00:40:00Z',
      },
      health: {
        ok: false,
        reason: 'object store remote (https://far.example) did not answer within 2.5 s',
      },
    }),
  ];
  drives = [
    drive({
      name: 'silo1-d1',
      state: 'writing',
      mode: 'write',
      mounted_volume: 'A00001',
      volume_group: 'primary',
      current_rate_b_s: 250_000,
    }),
    drive({ name: 'silo1-d2' }),
    drive({ name: 'silo2-d1', silo: 'silo2', state: 'offline', offline_reason: 'cleaning' }),
  ];
  server.use(
    http.get('/api/v1/archive/drives/', () => HttpResponse.json(drives)),
    http.get('/api/v1/archive/cache/', () =>
      HttpResponse.json({
        capacity_bytes: 100e9,
        used_bytes: 30e9,
        free_bytes: 70e9,
        dirty_bytes: 20e9,
        clean_bytes: 10e9,
        pinned_bytes: 5e9,
        staging_bytes: 0,
        high_watermark: 0.8,
        low_watermark: 0.4,
      }),
    ),
    http.get('/api/v1/archive/buckets/board/', () => HttpResponse.json(buckets)),
    http.get('/api/v1/archive/volume-groups/', () =>
      HttpResponse.json([
        {
          name: 'primary',
          role: 'primary',
          silo: 'silo1',
          volumes: 2,
          capacity_bytes: 10e9,
          used_bytes: 5e9,
          live_bytes: 5e9,
          percent_full: 50,
        },
      ]),
    ),
    http.get('/api/v1/archive/requests/', ({ request }) => {
      const query = new URL(request.url).searchParams;
      expect([query.get('state'), query.get('kind')]).toEqual(['done', 'repack']);
      return HttpResponse.json(
        page([
          {
            id: 175,
            kind: 'repack',
            state: 'done',
            priority: 'background',
            file: null,
            file_name: null,
            copy_number: null,
            volume_group: 'primary',
            volume: 'A00007',
            bucket: null,
            drive: null,
            bytes_total: 4.94e6,
            bytes_done: 4.94e6,
            percent_done: 100,
            attempts: 0,
            error: '',
            created_at: '2026-11-27T00:31:00Z',
            started_at: '2026-11-27T00:32:00Z',
            finished_at: '2026-11-27T00:33:00Z',
          },
        ]),
      );
    }),
    http.get('/api/v1/archive/volumes/', ({ request }) => {
      const cursor = new URL(request.url).searchParams.get('cursor');
      return cursor === 'p2'
        ? HttpResponse.json(page([volume('A00003', 'scratch', 0)]))
        : HttpResponse.json(
            page(
              [
                volume('A00001', 'filling', 12),
                volume('A00002', 'full', 97, 'cartridge A00002 is write protected'),
              ],
              {
                next: 'http://testserver/api/v1/archive/volumes/?cursor=p2',
              },
            ),
          );
    }),
  );
});

describe('archive board', () => {
  it('shows every drive per silo with state, volume, group and KB/s', async () => {
    renderApp('/dashboards/archive');

    const silo1 = await screen.findByRole('table', { name: 'Silo silo1: 2 of 2 drives online' });
    const row = within(silo1).getByRole('row', { name: /silo1-d1/ });
    expect(row).toHaveTextContent('writing');
    expect(row).toHaveTextContent('A00001');
    expect(row).toHaveTextContent('primary');
    expect(within(row).getAllByRole('cell')[3]).toHaveTextContent('250');

    const silo2 = screen.getByRole('table', { name: 'Silo silo2: 0 of 1 drives online' });
    expect(silo2).toHaveTextContent('cleaning');
    expect(within(silo2).getByRole('button', { name: 'Vary silo2-d1 on' })).toBeInTheDocument();
  });

  it('varies a drive off with the reason and shows it offline', async () => {
    let sent: unknown;
    server.use(
      http.post('/api/v1/archive/drives/silo1-d2/vary/', async ({ request }) => {
        sent = await request.json();
        drives = drives.map((d) =>
          d.name === 'silo1-d2' ? { ...d, state: 'offline', offline_reason: 'head errors' } : d,
        );
        return HttpResponse.json(drives[1]);
      }),
    );
    renderApp('/dashboards/archive');

    // each drive has its own reason: what is typed beside another drive is not sent
    await userEvent.type(await screen.findByLabelText('Reason to vary silo1-d1 off'), 'cleaning');
    await userEvent.type(screen.getByLabelText('Reason to vary silo1-d2 off'), 'head errors');
    await userEvent.click(screen.getByRole('button', { name: 'Vary silo1-d2 off' }));

    expect(await screen.findByText('silo1-d2 varied off: now offline.')).toBeInTheDocument();
    expect(sent).toEqual({ online: false, reason: 'head errors' });
    const row = screen.getByRole('row', { name: /silo1-d2/ });
    await waitFor(() => expect(row).toHaveTextContent('offline'));
    expect(within(row).getByRole('button', { name: 'Vary silo1-d2 on' })).toBeInTheDocument();
  });

  it('shows the API’s words when a vary is refused', async () => {
    server.use(
      http.post('/api/v1/archive/drives/silo1-d1/vary/', () =>
        HttpResponse.json(
          { detail: 'silo1-d1 is writing A00001; vary it off when the mount ends.' },
          { status: 409 },
        ),
      ),
    );
    renderApp('/dashboards/archive');

    await userEvent.click(await screen.findByRole('button', { name: 'Vary silo1-d1 off' }));

    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Could not vary silo1-d1 off: silo1-d1 is writing A00001; vary it off when the mount ends.',
    );
  });

  it('shows the object store beside the silos: holdings, work, transfers, failures, health', async () => {
    renderApp('/dashboards/archive');

    const table = await screen.findByRole('table', { name: 'Buckets: 1 of 2 answering' });
    const up = within(table).getByRole('row', { name: /archive-s3/ });
    const cells = within(up)
      .getAllByRole('cell')
      .map((cell) => cell.textContent);
    expect(cells).toEqual([
      'up',
      '1,234',
      '5.00 GB',
      '3 queued · 1 running (3.00 MB)',
      '—',
      '40 · 80.0 MB',
      '2 · 4.00 MB',
      '—',
    ]);
    const down = within(table).getByRole('row', { name: /offsite/ });
    expect(down).toHaveTextContent('down object store remote (https://far.example) did not answer');
    expect(down).toHaveTextContent('5: object store remote (https://far.example) is unreachable');
  });

  it('says when no bucket is configured', async () => {
    buckets = [];
    renderApp('/dashboards/archive');
    expect(
      await screen.findByText('No bucket is configured: every copy goes to tape.'),
    ).toBeInTheDocument();
  });

  it('shows the cache gauge with its watermarks', async () => {
    renderApp('/dashboards/archive');

    const gauge = await screen.findByRole('meter', { name: 'Cache used' });
    expect(gauge).toHaveAttribute('aria-valuenow', '30');
    expect(gauge).toHaveAttribute(
      'aria-valuetext',
      '30.0 GB of 100 GB used (30 %): 20.0 GB dirty, 5.00 GB pinned, 70.0 GB free. Purge starts at 80 % and stops at 40 %.',
    );
  });

  it('follows the volume pages and counts volumes by state with a % full histogram', async () => {
    renderApp('/dashboards/archive');

    const states = await screen.findByRole('table', { name: 'Volumes by state' });
    expect(within(states).getByRole('row', { name: 'filling 1' })).toBeInTheDocument();
    expect(within(states).getByRole('row', { name: 'scratch 1' })).toBeInTheDocument();
    expect(within(states).getByRole('row', { name: 'all 3' })).toBeInTheDocument();
    expect(
      screen.getByRole('img', { name: '2 volumes: 1 at 10–20 %, 1 at 90–100 %.' }),
    ).toBeInTheDocument();
    expect(screen.getByRole('table', { name: 'Volume groups' })).toHaveTextContent('50 %');
    const faults = screen.getByRole('list', { name: 'Volume faults' });
    expect(
      within(faults)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['A00002 full cartridge A00002 is write protected']);
  });

  it('shows the finished repacks and the drive faults in its history', async () => {
    renderApp('/dashboards/archive');

    const repacks = await screen.findByRole('table', { name: 'Finished repacks' });
    const row = within(repacks).getByRole('row', { name: /#175/ });
    expect(
      within(row)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    ).toEqual(['A00007', '4.94 MB', '2026-11-27 00:32 UTC', '2026-11-27 00:33 UTC']);
    const faults = screen.getByRole('list', { name: 'Drive faults' });
    expect(
      within(faults)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['silo2-d1 offline cleaning']);
  });

  it('keeps the board up when one panel fails', async () => {
    server.use(
      http.get('/api/v1/archive/cache/', () =>
        HttpResponse.json({ detail: 'The cache filesystem is not mounted.' }, { status: 503 }),
      ),
    );
    renderApp('/dashboards/archive');

    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The cache filesystem is not mounted.',
    );
    expect(screen.getByRole('table', { name: /Silo silo1/ })).toBeInTheDocument();
  });
});
