import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { IngestRequestDetail } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asUser, page, server } from '../../test/server';
import { asProvider, granuleRow, ingestRequest, pdr, requestDetail } from './fixtures';

beforeEach(() => asProvider());

describe('provider: ingest requests', () => {
  it('lists my requests with % done in bytes and granule counts', async () => {
    server.use(
      http.get('/api/v1/ingest/requests/', () =>
        HttpResponse.json(
          page([
            ingestRequest(),
            ingestRequest({
              id: 11,
              state: 'completed',
              way: 'pdr',
              label: 'MODAPS.2026324.PDR',
              archived_count: 3,
              failed_count: 0,
              percent_done: 100,
              bytes_done: 3_000_000,
            }),
          ]),
        ),
      ),
    );
    renderApp('/provider');
    expect(await screen.findByRole('link', { name: 'My ingest' })).toHaveAttribute(
      'aria-current',
      'page',
    );

    const running = await screen.findByRole('row', { name: /Request 12/ });
    expect(
      within(running).getByRole('progressbar', { name: 'Request 12, percent done' }),
    ).toHaveAttribute('value', '66.67');
    expect(running).toHaveTextContent('67 %');
    expect(running).toHaveTextContent('1 of 3 archived, 1 failed');
    expect(running).toHaveTextContent('running');
    expect(running).toHaveTextContent('bulk · day 325 · MODAPS');
    const done = screen.getByRole('row', { name: /Request 11/ });
    expect(done).toHaveTextContent('completed');
    expect(done).toHaveTextContent('100 %');
    expect(screen.getByText('Running requests refresh every 3 seconds.')).toBeInTheDocument();
  });

  it('shows each granule’s state and why it failed, and retries one or all', async () => {
    const retried: unknown[] = [];
    let detail: IngestRequestDetail = requestDetail();
    server.use(
      http.get('/api/v1/ingest/requests/12/', ({ request }) => {
        const state = new URL(request.url).searchParams.get('state');
        return HttpResponse.json(
          state
            ? { ...detail, granules: (detail.granules ?? []).filter((g) => g.state === state) }
            : detail,
        );
      }),
      http.post('/api/v1/ingest/requests/12/retry/', async ({ request }) => {
        const body = (await request.json()) as { positions?: number[] };
        retried.push(body);
        detail = requestDetail({
          state: 'running',
          failed_count: 0,
          counts: { archived: 1, received: 1, archiving: 1 },
          granules: [
            granuleRow(0),
            granuleRow(1, { state: 'received', bytes_done: 0, archived_at: null }),
            granuleRow(2, { state: 'archiving' }),
          ],
        });
        return HttpResponse.json({ ...ingestRequest(), retried: 1 }, { status: 202 });
      }),
    );
    renderApp('/provider/requests/12');

    expect(
      await screen.findByRole('heading', { name: 'Ingest request 12 running', level: 1 }),
    ).toBeInTheDocument();
    expect(screen.getByRole('progressbar', { name: 'Percent done in bytes' })).toHaveAttribute(
      'value',
      '66.67',
    );
    expect(screen.getByText(/2.00 MB of 3.00 MB in a final state/)).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Granules per state' })).toHaveTextContent(
      'archiving 1archived 1failed 1',
    );

    const rows = within(screen.getByRole('region', { name: 'Granules' }))
      .getAllByRole('row')
      .slice(1);
    expect(rows.map((row) => within(row).getAllByRole('cell')[1]?.textContent)).toEqual([
      'archived',
      'failed 2 attempts',
      'archiving',
    ]);
    const failed = rows[1] as HTMLElement;
    expect(failed).toHaveTextContent('CHECKSUM VERIFICATION FAILURE');
    expect(failed).toHaveTextContent(
      'MD5 of MOD021KM.A2026325.0001.061.2026326101512.hdf is 0f3a…, not the declared 9b2c…',
    );
    expect(within(rows[0] as HTMLElement).queryByRole('button')).not.toBeInTheDocument();

    await userEvent.selectOptions(screen.getByLabelText('Show'), 'failed');
    await waitFor(() =>
      expect(
        within(screen.getByRole('region', { name: 'Granules' })).getAllByRole('row'),
      ).toHaveLength(2),
    );

    await userEvent.click(
      screen.getByRole('button', { name: 'Retry MOD021KM.A2026325.0001.061.2026326101512' }),
    );
    expect(await screen.findByText('Sent 1 granule round again.')).toBeInTheDocument();
    expect(retried).toEqual([{ positions: [1] }]);
    expect(await screen.findByText('No failed granules')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Retry all/ })).not.toBeInTheDocument();
  });

  it('retries every failed granule, and shows a refusal in the API’s words', async () => {
    let calls = 0;
    server.use(
      http.get('/api/v1/ingest/requests/12/', () =>
        HttpResponse.json(requestDetail({ state: 'failed', finished_at: '2026-11-22T01:05:00Z' })),
      ),
      http.post('/api/v1/ingest/requests/12/retry/', async ({ request }) => {
        calls += 1;
        expect(await request.json()).toEqual({ positions: [1] });
        return HttpResponse.json(
          { detail: 'Granule 1 waits for a staging file that is gone: deliver it again.' },
          { status: 409 },
        );
      }),
    );
    renderApp('/provider/requests/12');
    await userEvent.click(await screen.findByRole('button', { name: 'Retry all 1 failed' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Granule 1 waits for a staging file that is gone: deliver it again.',
    );
    expect(calls).toBe(1);
    expect(screen.queryByText(/Refreshing every/)).not.toBeInTheDocument();
  });

  it('says why a granule stopped and offers no retry that cannot succeed', async () => {
    const zeros = 'MOD021KM.A2026325.0001.061.2026326101512.hdf';
    server.use(
      http.get('/api/v1/ingest/requests/12/', () =>
        HttpResponse.json(
          requestDetail({
            granules: [
              granuleRow(0, {
                state: 'failed',
                disposition: 'CHECKSUM VERIFICATION FAILURE',
                status: 'Stopped: the provider declared 000…. Next: submit it anew.',
                stopped: true,
                actions: [
                  {
                    action: 'retry',
                    possible: false,
                    reason: `${zeros} was declared with a checksum of only zeros`,
                  },
                  { action: 'redeliver', possible: true, reason: 'submit it anew' },
                ],
              }),
              granuleRow(1, {
                state: 'archiving',
                status: 'Stopped: the archive’s only copy of G.hdf fails its checksum.',
                stopped: true,
                actions: [{ action: 'retry', possible: false, reason: 'the only copy is bad' }],
              }),
            ],
          }),
        ),
      ),
    );
    renderApp('/provider/requests/12');
    expect(
      await screen.findByText(/1 granule has stopped and waits for someone to act/),
    ).toBeInTheDocument();
    const rows = within(screen.getByRole('region', { name: 'Granules' }))
      .getAllByRole('row')
      .slice(1);
    expect(rows[0]).toHaveTextContent('Next: submit it anew.');
    expect(rows[0]).toHaveTextContent(
      `Retry is not possible: ${zeros} was declared with a checksum of only zeros`,
    );
    expect(rows[1]).toHaveTextContent('only copy of G.hdf fails its checksum');
    expect(screen.queryByRole('button', { name: /^Retry/ })).not.toBeInTheDocument();
    expect(screen.getByText(/No failed granule can be retried as it stands/)).toBeInTheDocument();
  });

  it('follows a running request live until it is archived', async () => {
    let calls = 0;
    server.use(
      http.get('/api/v1/ingest/requests/12/', () => {
        calls += 1;
        return HttpResponse.json(
          calls === 1
            ? requestDetail({
                failed_count: 0,
                counts: { archiving: 1 },
                granules: [granuleRow(0, { state: 'archiving' })],
              })
            : requestDetail({
                state: 'completed',
                failed_count: 0,
                percent_done: 100,
                counts: { archived: 1 },
                granules: [granuleRow(0)],
              }),
        );
      }),
    );
    renderApp('/provider/requests/12');
    expect(
      await screen.findByText('Refreshing every 3 seconds until the request is finished.'),
    ).toBeInTheDocument();
    await waitFor(
      () => expect(screen.getByRole('heading', { level: 1 })).toHaveTextContent('completed'),
      { timeout: 6000 },
    );
    expect(
      within(screen.getByRole('region', { name: 'Granules' })).getAllByRole('row')[1],
    ).toHaveTextContent('archived');
    expect(screen.queryByText(/Refreshing every/)).not.toBeInTheDocument();
  }, 10_000);

  it('is for providers and operators only', async () => {
    asUser();
    renderApp('/provider');
    expect(
      await screen.findByText(
        'This page is for provider and operator accounts; scientist is not one.',
      ),
    ).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'My ingest' })).not.toBeInTheDocument();
  });
});

describe('provider: PDRs', () => {
  it('lists PDRs with their state and disposition', async () => {
    server.use(
      http.get('/api/v1/ingest/pdrs/', () =>
        HttpResponse.json(
          page([
            pdr(),
            pdr({
              id: 6,
              name: 'BROKEN.PDR',
              state: 'rejected',
              disposition: 'INVALID FILE COUNT',
              detail: 'TOTAL_FILE_COUNT says 3, the PDR lists 2',
              request: null,
              pan: '',
            }),
          ]),
        ),
      ),
    );
    renderApp('/provider/pdrs');
    const answered = await screen.findByRole('row', { name: /MODAPS\.2026325\.PDR/ });
    expect(answered).toHaveTextContent('answered');
    expect(within(answered).getByRole('link', { name: 'Request 12' })).toHaveAttribute(
      'href',
      '/provider/requests/12',
    );
    const rejected = screen.getByRole('row', { name: /BROKEN\.PDR/ });
    expect(rejected).toHaveTextContent('rejected');
    expect(rejected).toHaveTextContent('INVALID FILE COUNT');
    expect(rejected).toHaveTextContent('TOTAL_FILE_COUNT says 3, the PDR lists 2');
  });

  it('shows the PAN readable, with a disposition per file', async () => {
    server.use(http.get('/api/v1/ingest/pdrs/5/', () => HttpResponse.json(pdr())));
    renderApp('/provider/pdrs/5');
    const table = await screen.findByRole('table', { name: 'Disposition of each file' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((row) => row.textContent)).toEqual([
      'MOD021KM.A2026325.0000.061.2026326101512.hdf/modaps/325SUCCESSFUL',
      'MOD021KM.A2026325.0001.061.2026326101512.hdf/modaps/325CHECKSUM VERIFICATION FAILURE',
    ]);
    expect(screen.getByRole('heading', { name: 'The PAN (LONGPAN)' })).toBeInTheDocument();
    expect(screen.getByLabelText('PAN text')).toHaveTextContent('MESSAGE_TYPE = LONGPAN;');
    expect(screen.getByRole('link', { name: 'Request 12: per-granule state' })).toHaveAttribute(
      'href',
      '/provider/requests/12',
    );
  });

  it('shows why a PDR was refused, from its PDRD', async () => {
    server.use(
      http.get('/api/v1/ingest/pdrs/6/', () =>
        HttpResponse.json(
          pdr({
            id: 6,
            name: 'BROKEN.PDR',
            state: 'rejected',
            disposition: 'INVALID DATA TYPE',
            request: null,
            pan: '',
            detail: 'MOD99 is not a collection of MODAPS',
            pdrd: 'MESSAGE_TYPE = LONGPDRD;\nNO_FILE_GRPS = 2;\nDATA_TYPE = MOD021KM;\nFILE_GRP_DISPOSITION = "SUCCESSFUL";\nDATA_TYPE = MOD99;\nFILE_GRP_DISPOSITION = "INVALID DATA TYPE";\n',
          }),
        ),
      ),
    );
    renderApp('/provider/pdrs/6');
    expect(await screen.findByText('MOD99 is not a collection of MODAPS')).toBeInTheDocument();
    const table = screen.getByRole('table', { name: 'Disposition of each file group' });
    expect(
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((row) => row.textContent),
    ).toEqual(['MOD021KMSUCCESSFUL', 'MOD99INVALID DATA TYPE']);
  });

  it('says every file succeeded for a short PAN, and waits live for an accepted PDR', async () => {
    server.use(
      http.get('/api/v1/ingest/pdrs/5/', () =>
        HttpResponse.json(
          pdr({
            disposition: 'SUCCESSFUL',
            pan: 'MESSAGE_TYPE = SHORTPAN;\nDISPOSITION = "SUCCESSFUL";\nTIME_STAMP = 2026-11-22T01:03:00Z;\n',
          }),
        ),
      ),
      http.get('/api/v1/ingest/pdrs/9/', () =>
        HttpResponse.json(pdr({ id: 9, state: 'accepted', disposition: '', pan: '' })),
      ),
    );
    renderApp('/provider/pdrs/5');
    expect(await screen.findByText('SUCCESSFUL', { selector: 'p span' })).toBeInTheDocument();
    expect(screen.getByText(/Every file of the PDR/)).toBeInTheDocument();

    renderApp('/provider/pdrs/9');
    expect(await screen.findByText(/the PAN appears here when they are done/)).toBeInTheDocument();
  });
});
