import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { ConsoleCopy, ConsoleFile, ConsoleGranulePage } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asOperator, server } from '../../test/server';
import { granulePage } from './fixtures';

let current: ConsoleGranulePage;
let posted: { action: string; body: unknown }[];

beforeEach(() => {
  asOperator();
  current = granulePage();
  posted = [];
  server.use(
    http.get('/api/v1/console/granules/7/', () => HttpResponse.json(current)),
    http.post('/api/v1/console/granules/7/:action/', async ({ request, params }) => {
      const body = (await request.json()) as { reason: string; confirm_granule_id?: string };
      posted.push({ action: String(params.action), body });
      if (params.action === 'delete' && body.reason === 'race')
        return HttpResponse.json(
          { detail: 'MOD09.061:MOD09.A2026001.0000 has files being moved right now' },
          { status: 409 },
        );
      const state = params.action === 'withdraw' ? 'withdrawn' : 'deleted';
      current = {
        ...granulePage({ state }),
        retired_reason: `MOD09.061:MOD09.A2026001.0000 was ${state} by an operator: ${body.reason}`,
      };
      current.timeline = [
        ...current.timeline,
        {
          at: '2026-11-21T09:00:00Z',
          kind: 'audit',
          text: params.action as string,
          actor: 'ops',
          reason: body.reason,
        },
      ];
      return HttpResponse.json(current);
    }),
  );
});

describe('operator: one granule', () => {
  it('shows files, every copy with its volume and group, the cache, and the timeline', async () => {
    renderApp('/dashboards/granules/7');
    expect(await screen.findByRole('heading', { name: 'MOD09.A2026001.0000' })).toBeInTheDocument();
    const copies = screen.getByRole('table', { name: 'Copies of MOD09.A2026001.0000.hdf' });
    const first = within(copies).getByRole('row', { name: /^1 / });
    expect(first).toHaveTextContent('A00001');
    expect(first).toHaveTextContent('primary');
    expect(first).toHaveTextContent('verified');
    expect(within(copies).getByRole('row', { name: /^2 / })).toHaveTextContent('backup');
    expect(screen.getByText(/in the cache \(clean\)/)).toBeInTheDocument();
    const timeline = screen.getByRole('list', { name: 'Timeline' });
    expect(within(timeline).getAllByRole('listitem')).toHaveLength(2);
    expect(timeline).toHaveTextContent('received in ingest request 3 (bulk, MODAPS)');
  });

  it('shows a copy in the object store with its bucket and key, and no position', async () => {
    const [file] = current.files as [ConsoleFile];
    const [tape, other] = file.copies as [ConsoleCopy, ConsoleCopy];
    const key = 'MOD09.061/MOD09.A2026001.0000/MOD09.A2026001.0000.hdf';
    current.files = [
      {
        ...file,
        copies: [
          {
            ...tape,
            medium: 'object',
            volume: null,
            volume_group: null,
            volume_state: null,
            position: null,
            bucket: 'archive-s3',
            key,
            etag: '0cc175b9c0f1b6a831c399e269772661',
          },
          other,
        ],
      },
    ];
    renderApp('/dashboards/granules/7');
    const copies = await screen.findByRole('table', { name: 'Copies of MOD09.A2026001.0000.hdf' });
    const cells = within(within(copies).getByRole('row', { name: /^1 / })).getAllByRole('cell');
    expect(cells.map((cell) => cell.textContent)).toEqual([
      'object store',
      'bucket archive-s3',
      key,
      '—',
      '3.00 KB',
      'verified',
      expect.any(String),
      expect.any(String),
    ]);
    const second = within(copies).getByRole('row', { name: /^2 / });
    expect(second).toHaveTextContent('tape');
    expect(second).toHaveTextContent('B00001');
  });

  it('withdraws with a reason, after a confirming step', async () => {
    const user = userEvent.setup();
    renderApp('/dashboards/granules/7');
    await user.click(await screen.findByRole('button', { name: 'Withdraw…' }));
    const form = screen.getByRole('form', { name: 'Withdraw' });
    const submit = within(form).getByRole('button', { name: 'Withdraw granule' });
    expect(submit).toBeDisabled();
    await user.type(within(form).getByLabelText(/Reason/), 'bad calibration');
    await user.click(submit);
    expect(await screen.findByText(/Withdrawn: hidden from search/)).toBeInTheDocument();
    expect(posted).toEqual([{ action: 'withdraw', body: { reason: 'bad calibration' } }]);
    expect(screen.getByText(/was withdrawn by an operator: bad calibration/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Restore…' })).toBeInTheDocument();
    const timeline = screen.getByRole('list', { name: 'Timeline' });
    expect(timeline).toHaveTextContent('withdraw · by ops');
  });

  it('deletes only once the id is typed again, and shows a refusal in the API’s words', async () => {
    const user = userEvent.setup();
    renderApp('/dashboards/granules/7');
    await user.click(await screen.findByRole('button', { name: 'Delete…' }));
    const form = screen.getByRole('form', { name: 'Delete' });
    const submit = within(form).getByRole('button', { name: 'Delete granule' });
    await user.type(within(form).getByLabelText(/Reason/), 'race');
    await user.type(within(form).getByLabelText('Type the granule id to confirm'), 'MOD09');
    expect(submit).toBeDisabled();
    await user.type(
      within(form).getByLabelText('Type the granule id to confirm'),
      '.A2026001.0000',
    );
    await user.click(submit);
    expect(await screen.findByRole('alert')).toHaveTextContent('has files being moved right now');
    expect(posted[0]).toEqual({
      action: 'delete',
      body: { reason: 'race', confirm_granule_id: 'MOD09.A2026001.0000' },
    });

    await user.clear(within(form).getByLabelText(/Reason/));
    await user.type(within(form).getByLabelText(/Reason/), 'corrupt');
    await user.click(submit);
    await waitFor(() =>
      expect(screen.getByText(/Deleted: nothing more can be done/)).toBeInTheDocument(),
    );
    expect(screen.queryByRole('button', { name: 'Delete…' })).not.toBeInTheDocument();
  });

  it('releases cached copies and says what was released and what was kept, and why', async () => {
    let sent: unknown;
    server.use(
      http.post('/api/v1/archive/cache/release/', async ({ request }) => {
        sent = await request.json();
        return HttpResponse.json({
          files: [70],
          freed_bytes: 3000,
          kept: [{ file: 71, reason: 'MOD09.met is pinned; unpin it first' }],
        });
      }),
    );
    current = {
      ...granulePage(),
      files: [
        ...granulePage().files,
        { ...(granulePage().files[0] as ConsoleFile), id: 71, name: 'MOD09.met' },
      ],
    };
    renderApp('/dashboards/granules/7');
    await userEvent.click(await screen.findByRole('button', { name: 'Release cached copies' }));
    const outcome = await screen.findByRole('status', { name: 'Release outcome' });
    expect(sent).toEqual({ files: [70, 71] });
    expect(outcome).toHaveTextContent('Released 1 file, 3.00 KB freed: MOD09.A2026001.0000.hdf.');
    expect(outcome).toHaveTextContent('Kept MOD09.met: MOD09.met is pinned; unpin it first');
  });

  it('says why nothing was released, and offers a redelivery for a damaged only copy', async () => {
    server.use(
      http.post('/api/v1/archive/cache/release/', () =>
        HttpResponse.json(
          { detail: 'G.hdf is dirty: a copy is still to be written to tape' },
          {
            status: 409,
          },
        ),
      ),
    );
    current = {
      ...granulePage({ state: 'archiving' }),
      failure: 'the cached copy of G.hdf does not match its catalog checksum',
      actions: [
        { action: 'retry', possible: false, reason: 'the cache holds the only copy of G.hdf' },
        { action: 'redeliver', possible: true, reason: 'give the granule up' },
      ],
    };
    renderApp('/dashboards/granules/7');
    const stopped = await screen.findByRole('region', { name: 'Archive work stopped' });
    expect(stopped).toHaveTextContent('Retry is not possible: the cache holds the only copy');
    expect(
      within(stopped).getByRole('button', { name: 'Ask the provider to deliver it again' }),
    ).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Release cached copies' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Nothing was released: G.hdf is dirty: a copy is still to be written to tape',
    );
  });
});
