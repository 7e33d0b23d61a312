import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { ArchiveRequest } from '../../lib/api/types';
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
    drive: null,
    bytes_total: 1e6,
    bytes_done: 0,
    percent_done: 0,
    attempts: 3,
    error: `checksum mismatch on f${id}.hdf`,
    created_at: '2026-11-22T00:00:00Z',
    started_at: null,
    finished_at: '2026-11-22T00:05:00Z',
    ...overrides,
  };
}

describe('failures dashboard', () => {
  let bulk: unknown[];

  beforeEach(() => {
    bulk = [];
    server.use(
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
