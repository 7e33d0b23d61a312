import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { Discrepancy, Reconciliation } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asOperator, page, server } from '../../test/server';

function discrepancy(id: number, overrides: Partial<Discrepancy> = {}): Discrepancy {
  return {
    id,
    kind: 'copy_bytes_mismatch',
    file: 40 + id,
    file_name: `f${id}.hdf`,
    copy: 100 + id,
    volume: 'A00001',
    request: null,
    detail: `MOD021KM.061/G${id}/f${id}.hdf copy 1 on A00001 does not hash to its checksum`,
    repair: 'mark the copy BAD: background repair rewrites it from a good copy',
    repaired_at: null,
    outcome: '',
    actions: [{ action: 'repair', possible: true, reason: 'mark the copy BAD' }],
    ...overrides,
  };
}

function run(overrides: Partial<Reconciliation> = {}): Reconciliation {
  return {
    id: 12,
    scope: 'full',
    sample: null,
    repair: false,
    state: 'done',
    requested_by: 'ops',
    created_at: '2026-11-22T00:00:00Z',
    started_at: '2026-11-22T00:00:01Z',
    finished_at: '2026-11-22T00:02:00Z',
    volumes_read: 16,
    copies_read: 240,
    cache_files_read: 120,
    discrepancy_count: 3,
    error: '',
    by_kind: [
      { kind: 'copy_bytes_mismatch', count: 1, repaired: 0 },
      { kind: 'member_orphan', count: 1, repaired: 0 },
      { kind: 'volume_truncated', count: 1, repaired: 1 },
    ],
    discrepancies: [
      discrepancy(1),
      discrepancy(2, {
        kind: 'member_orphan',
        file: null,
        file_name: null,
        copy: null,
        volume: 'B00002',
        detail: 'X/G9/v1/g.dat at byte 2048 of B00002 is in no copy of the catalog',
        repair: '',
      }),
      discrepancy(3, {
        kind: 'volume_truncated',
        file: null,
        file_name: null,
        copy: null,
        volume: 'B00001',
        detail: 'B00001 ends at byte 4096, before its end of data 9216, and is still filling',
        repair: 'set the volume FULL (never appended again); mark its lost copies BAD',
        repaired_at: '2026-11-22T00:03:00Z',
        outcome: 'B00001 is full (never appended again); 1 lost copies marked BAD',
      }),
    ],
    notes: [],
    ...overrides,
  };
}

describe('reconciliation on the failures dashboard', () => {
  let started: unknown[];
  let repaired: { run: string; body: unknown }[];

  beforeEach(() => {
    asOperator();
    started = [];
    repaired = [];
    server.use(
      // the failures page's other sections: nothing failed
      http.get('/api/v1/console/failures/groups/', () => HttpResponse.json([])),
      http.get('/api/v1/console/dead-letter/', () =>
        HttpResponse.json({ count: 0, next: null, previous: null, results: [] }),
      ),
      http.get('/api/v1/archive/reconciliation/', () => HttpResponse.json(page([run()]))),
      http.post('/api/v1/archive/reconciliation/', async ({ request }) => {
        started.push(await request.json());
        return HttpResponse.json(run({ id: 13, state: 'queued' }), { status: 202 });
      }),
      http.post('/api/v1/archive/reconciliation/:id/repair/', async ({ request, params }) => {
        const body = (await request.json()) as { ids?: number[] };
        repaired.push({ run: String(params.id), body });
        return HttpResponse.json({ repaired: body.ids?.length ?? 1, discrepancies: [] });
      }),
      http.get('/api/v1/archive/requests/', () => HttpResponse.json(page([]))),
      http.get('/api/v1/ingest/requests/', () => HttpResponse.json(page([]))),
    );
  });

  it('says why a discrepancy cannot be repaired', async () => {
    const only = discrepancy(5, {
      kind: 'migration_missing',
      repair: '',
      actions: [
        {
          action: 'repair',
          possible: false,
          reason: 'its source, the cached copy, fails its checksum and no other copy exists',
        },
      ],
    });
    server.use(
      http.get('/api/v1/archive/reconciliation/', () =>
        HttpResponse.json(page([run({ discrepancies: [only] })])),
      ),
    );
    renderApp('/dashboards/failures');
    const row = await screen.findByRole('row', { name: /migration_missing/ });
    expect(row).toHaveTextContent(
      'Repair is not possible: its source, the cached copy, fails its checksum',
    );
    expect(within(row).queryByRole('button')).not.toBeInTheDocument();
  });

  it('shows when the latest run ran, its scope and each discrepancy with its repair', async () => {
    renderApp('/dashboards/failures');

    expect(await screen.findByText(/Run #12 \(full\) · done/)).toHaveTextContent(
      'read 16 volumes, 240 copies and 120 cached files · 3 discrepancies',
    );
    const kinds = screen.getByRole('list', { name: 'Discrepancies by kind' });
    expect(
      within(kinds)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['copy_bytes_mismatch: 1', 'member_orphan: 1', 'volume_truncated: 1 (1 repaired)']);

    const bad = screen.getByRole('row', { name: /copy_bytes_mismatch/ });
    expect(bad).toHaveTextContent('volume A00001 · file f1.hdf · copy #101');
    expect(bad).toHaveTextContent('mark the copy BAD');
    const orphan = screen.getByRole('row', { name: /member_orphan/ });
    expect(orphan).toHaveTextContent('Report only (no safe repair)');
    expect(within(orphan).queryByRole('button')).not.toBeInTheDocument();
    const cut = screen.getByRole('row', { name: /volume_truncated/ });
    expect(cut).toHaveTextContent('Repaired: B00001 is full');
    expect(within(cut).queryByRole('button')).not.toBeInTheDocument();
  });

  it('tells bytes past a volume’s end of data as a note, not a discrepancy', async () => {
    const message =
      '0.4 MB lie on A00003 past its recorded end of data (byte 9216) hold 3 whole members ' +
      '(0.4 MB of data): a write not recorded (interrupted, or under way) left them; nothing ' +
      'is lost, the next append cuts them off';
    const member = (i: number) => ({
      name: `MOD021KM.061/G${i}/f${i}.hdf`,
      position: 9216 + i * 140_000,
      size: 139_000,
      collection: 'MOD021KM.061',
      granule_id: `G${i}`,
      file: `f${i}.hdf`,
      copy: '1',
    });
    server.use(
      http.get('/api/v1/archive/reconciliation/', () =>
        HttpResponse.json(
          page([
            run({
              discrepancy_count: 0,
              by_kind: [],
              discrepancies: [],
              notes: [
                {
                  kind: 'past_end_of_data',
                  message,
                  volume: 'A00003',
                  end_of_data: 9216,
                  tail_bytes: 421_024,
                  members: 3,
                  member_bytes: 417_000,
                  listed: [member(0), member(1)],
                },
              ],
            }),
          ]),
        ),
      ),
    );
    renderApp('/dashboards/failures');

    expect(await screen.findByText(/Run #12 \(full\) · done/)).toHaveTextContent('0 discrepancies');
    const notes = screen.getByRole('region', { name: 'Notes (nothing wrong, not counted)' });
    expect(within(notes).getByText(message)).toBeInTheDocument();
    expect(within(notes).queryByRole('alert')).not.toBeInTheDocument();
    expect(notes.querySelector('.notice--error')).toBeNull();
    await userEvent.click(within(notes).getByText(/What lies past the end of data on A00003/));
    const members = within(notes).getByRole('list', {
      name: 'Members past the end of data on A00003',
    });
    expect(
      within(members)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual([
      expect.stringContaining('byte 9216: MOD021KM.061/G0/f0.hdf (granule G0, copy 1,'),
      expect.stringContaining('byte 149216: MOD021KM.061/G1/f1.hdf (granule G1, copy 1,'),
      '… and 1 more',
    ]);
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });

  it('repairs one discrepancy, then all of them', async () => {
    renderApp('/dashboards/failures');

    const bad = await screen.findByRole('row', { name: /copy_bytes_mismatch/ });
    await userEvent.click(within(bad).getByRole('button', { name: 'Repair discrepancy 1' }));
    expect(await screen.findByText('Repaired 1 discrepancy.')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'Repair all (1)' }));
    await screen.findByText('Repaired 1 discrepancy.');
    expect(repaired).toEqual([
      { run: '12', body: { ids: [1] } },
      { run: '12', body: {} },
    ]);
  });

  it('runs a full reconciliation when asked', async () => {
    renderApp('/dashboards/failures');

    await userEvent.click(
      await screen.findByRole('checkbox', { name: 'Full (read every volume)' }),
    );
    await userEvent.click(screen.getByRole('button', { name: 'Run reconciliation' }));
    expect(await screen.findByText('Reconciliation #13 started (full).')).toBeInTheDocument();
    expect(started).toEqual([{ full: true }]);
  });

  it('says when none has run yet, and shows the API’s words when a run is refused', async () => {
    server.use(
      http.get('/api/v1/archive/reconciliation/', () => HttpResponse.json(page([]))),
      http.post('/api/v1/archive/reconciliation/', () =>
        HttpResponse.json({ detail: 'sample must be a positive number' }, { status: 400 }),
      ),
    );
    renderApp('/dashboards/failures');

    expect(await screen.findByText('No reconciliation yet')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Repair all/ })).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Run reconciliation' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('sample must be a positive number');
  });
});
