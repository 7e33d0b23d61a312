import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { BulkDryRun, BulkItem, BulkJob } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asOperator, page, server } from '../../test/server';

function job(overrides: Partial<BulkJob> = {}): BulkJob {
  return {
    id: 7,
    kind: 'recall',
    state: 'running',
    query: { collection: 'MOD09GA.061', state: 'archived' },
    ids_given: 0,
    target_group: null,
    reason: 'reprocessing',
    requested_by: 'ops',
    granules_total: 4,
    bytes_total: 4e9,
    counts: { pending: 1, waiting: 1, done: 1, skipped: 0, failed: 1, cancelled: 0 },
    percent_done: 50,
    created_at: '2026-11-27T00:00:00Z',
    started_at: '2026-11-27T00:00:01Z',
    finished_at: null,
    cancelled_at: null,
    ...overrides,
  };
}

function item(id: number, state: BulkItem['state'], outcome: string): BulkItem {
  return {
    id,
    granule: 100 + id,
    label: `MOD09GA.061:G${id} v1`,
    bytes: 1e9,
    state,
    outcome,
    updated_at: '2026-11-27T00:01:00Z',
  };
}

const DRY: BulkDryRun = {
  dry_run: true,
  kind: 'recall',
  granules: 3,
  bytes: 3e9,
  unknown: [],
  unknown_count: 0,
  duplicates: 0,
};

describe('bulk jobs', () => {
  let posted: Record<string, unknown>[];
  let itemStates: (string | null)[];
  let cancels: number;

  beforeEach(() => {
    asOperator();
    posted = [];
    itemStates = [];
    cancels = 0;
    server.use(
      http.get('/api/v1/console/bulk/', () => HttpResponse.json(page([job()]))),
      http.get('/api/v1/archive/volume-groups/', () => HttpResponse.json([])),
      http.post('/api/v1/console/bulk/', async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        posted.push(body);
        if (body.dry_run) return HttpResponse.json(DRY);
        return HttpResponse.json(job({ id: 8, state: 'queued', percent_done: 0 }), {
          status: 201,
        });
      }),
      http.get('/api/v1/console/bulk/:id/', ({ params }) =>
        HttpResponse.json(job({ id: Number(params.id) })),
      ),
      http.get('/api/v1/console/bulk/:id/items/', ({ request }) => {
        const state = new URL(request.url).searchParams.get('state');
        itemStates.push(state);
        const all = [
          item(1, 'done', 'in the cache (1 files recalled)'),
          item(2, 'failed', 'no readable copy on tape'),
        ];
        return HttpResponse.json(page(all.filter((i) => !state || i.state === state)));
      }),
      http.post('/api/v1/console/bulk/:id/cancel/', () => {
        cancels += 1;
        return HttpResponse.json(
          job({
            cancelled_at: '2026-11-27T00:02:00Z',
            counts: { ...job().counts, pending: 0, cancelled: 1 },
          }),
        );
      }),
    );
  });

  it('lists jobs with their progress and what they act on', async () => {
    renderApp('/dashboards/bulk');
    const row = await screen.findByRole('row', { name: /#7/ });
    expect(row).toHaveTextContent('Recall to cache');
    expect(row).toHaveTextContent('collection=MOD09GA.061 · state=archived');
    expect(row).toHaveTextContent('4 · 4.00 GB · 1 failed');
    expect(within(row).getByRole('progressbar')).toHaveAttribute('aria-valuenow', '50');
  });

  it('runs a dry run first, then the job on confirm', async () => {
    renderApp('/dashboards/bulk');
    await userEvent.type(await screen.findByLabelText('Collection(s)'), 'MOD09GA.061');
    await userEvent.type(screen.getByLabelText('Reason (kept with the job)'), 'stage');
    await userEvent.click(screen.getByRole('button', { name: 'Dry run' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Dry run: 3 granules, 3.00 GB');
    expect(posted).toEqual([
      { kind: 'recall', query: { collection: 'MOD09GA.061' }, reason: 'stage', dry_run: true },
    ]);

    await userEvent.click(screen.getByRole('button', { name: 'Run on 3 granules' }));
    expect(await screen.findByRole('heading', { name: /Bulk job #8/ })).toBeInTheDocument();
    expect(posted[1]).toEqual({ ...posted[0], dry_run: false });
  });

  it('lists unknown lines of an id list and will not run it', async () => {
    server.use(
      http.post('/api/v1/console/bulk/', async ({ request }) => {
        posted.push((await request.json()) as Record<string, unknown>);
        return HttpResponse.json({
          ...DRY,
          granules: 1,
          unknown_count: 1,
          unknown: [{ line: 2, value: 'NOPE.1:x', detail: 'no such granule' }],
        });
      }),
    );
    renderApp('/dashboards/bulk');
    await userEvent.click(await screen.findByLabelText('By id list'));
    await userEvent.type(screen.getByLabelText(/Ids, one per line/), '42{enter}NOPE.1:x');
    await userEvent.click(screen.getByRole('button', { name: 'Dry run' }));
    const unknown = await screen.findByRole('list', { name: 'Unknown lines' });
    expect(unknown).toHaveTextContent('line 2: NOPE.1:x — no such granule');
    expect(screen.getByRole('button', { name: 'Run on 1 granules' })).toBeDisabled();
    expect(posted[0]?.ids).toEqual([42, 'NOPE.1:x']);
  });

  it('shows a job, filters its granules by state and cancels it', async () => {
    renderApp('/dashboards/bulk/7');
    expect(
      await screen.findByRole('heading', { name: /Bulk job #7: Recall to cache/ }),
    ).toBeInTheDocument();
    expect(screen.getByLabelText('Item counts')).toHaveTextContent(
      '1 done · 0 skipped · 1 failed · 1 waiting for the archive · 1 pending · 0 cancelled',
    );
    expect(await screen.findByRole('row', { name: /G2 v1/ })).toHaveTextContent('no readable copy');

    await userEvent.selectOptions(screen.getByLabelText('Show'), 'failed');
    await screen.findByText('no readable copy on tape');
    expect(screen.queryByText('in the cache (1 files recalled)')).not.toBeInTheDocument();
    expect(itemStates).toContain('failed');

    await userEvent.click(screen.getByRole('button', { name: 'Cancel job' }));
    expect(await screen.findByText('Cancelled 1 granules not yet started.')).toBeInTheDocument();
    expect(cancels).toBe(1);
  });

  it('says why granules were skipped, grouped by cause', async () => {
    server.use(
      http.get('/api/v1/console/bulk/:id/', () =>
        HttpResponse.json({
          ...job({ state: 'done', counts: { ...job().counts, skipped: 4 } }),
          outcomes: [
            {
              state: 'skipped',
              pattern: 'every file is in the cache already',
              example: 'every file is in the cache already',
              count: 3,
            },
            {
              state: 'skipped',
              pattern: 'its latest ingest (request #<n>) is archived: nothing to send round again',
              example: 'its latest ingest (request #4) is archived: nothing to send round again',
              count: 1,
            },
          ],
        }),
      ),
    );
    renderApp('/dashboards/bulk/7');
    const why = await screen.findByRole('region', { name: 'Why granules were skipped or failed' });
    const lines = within(why).getAllByRole('listitem');
    expect(lines.map((li) => li.textContent)).toEqual([
      'skipped 3: every file is in the cache already (and alike)',
      'skipped 1: its latest ingest (request #4) is archived: nothing to send round again',
    ]);
  });
});
