import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import { Chart } from '../../lib/chart';
import { renderApp } from '../../test/renderApp';
import { asOperator, server } from '../../test/server';

const today = {
  date: '2026-11-22',
  now: '2026-11-22T12:00:00Z',
  seconds_left: 43200,
  directions: {
    ingest: {
      bytes: 400e9,
      rate_b_s: 12.5e6,
      projected_bytes: 940e9,
      target_bytes: 1e12,
      surplus_bytes: -60e9,
      percent_of_target: 40,
    },
    distribution: {
      bytes: 1.2e12,
      rate_b_s: 25e6,
      projected_bytes: 2.28e12,
      target_bytes: 2e12,
      surplus_bytes: 280e9,
      percent_of_target: 60,
    },
  },
};

const hours = ['2026-11-22T10:00:00+00:00', '2026-11-22T11:00:00+00:00'];

beforeEach(() => {
  asOperator();
  server.use(
    http.get('/api/v1/metrics/today/', () => HttpResponse.json(today)),
    http.get('/api/v1/metrics/daily/', ({ request }) => {
      expect(new URL(request.url).searchParams.get('days')).toBe('30');
      return HttpResponse.json({
        targets: { ingest: 1e12, distribution: 2e12 },
        days: [{ date: '2026-11-22', ingest: 400e9, distribution: 1.2e12 }],
      });
    }),
    http.get('/api/v1/metrics/throughput/', ({ request }) => {
      expect(new URL(request.url).searchParams.get('hours')).toBe('48');
      return HttpResponse.json({
        hours,
        by_direction: { ingest: [1.5, 2], migrate: [0, 3], recall: [0, 0], distribution: [0, 0] },
        by_collection: { 'MOD021KM.061': [1.5, 2] },
      });
    }),
    http.get('/api/v1/metrics/targets/', () => HttpResponse.json({ ingest: 1, distribution: 2 })),
    http.get('/api/v1/demo/synthetic-history/', () =>
      HttpResponse.json({ synthetic: false, first_day: null, until: null, note: '' }),
    ),
  );
});

describe('throughput dashboard', () => {
  it('shows today against the targets with rate, projection and shortfall or surplus', async () => {
    renderApp('/dashboards');

    const ingest = await screen.findByRole('article', { name: 'Ingest' });
    expect(ingest).toHaveTextContent('400 GB of 1.00 TB');
    expect(ingest).toHaveTextContent('Of target40 %');
    expect(ingest).toHaveTextContent('Rate, last 5 min12.5 MB/s');
    expect(ingest).toHaveTextContent('Projected by midnight940 GB');
    expect(ingest).toHaveTextContent('Shortfall60.0 GB');
    expect(within(ingest).getByRole('meter')).toHaveAttribute('aria-valuenow', '40');

    const out = screen.getByRole('article', { name: 'Distribution' });
    expect(out).toHaveTextContent('1.20 TB of 2.00 TB');
    expect(out).toHaveTextContent('Surplus280 GB');
    expect(screen.getByText('2026-11-22 (UTC), 12 h left in the day.')).toBeInTheDocument();
  });

  it('charts the last 30 days and the last 48 hours', async () => {
    renderApp('/dashboards');

    expect(await screen.findByRole('heading', { name: 'Ingest per day' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Distribution per day' })).toBeInTheDocument();
    // each direction against its own target (1 TB a day is 11.57 MB/s on average) …
    expect(
      await screen.findByRole('img', {
        name:
          'Peak hourly rate in the last 2 hours by direction: ingest 2 MB/s. The daily ' +
          'target needs 11.57 MB/s on average.',
      }),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('img', {
        name: 'No bytes moved in the last 2 hours. The daily target needs 23.15 MB/s on average.',
      }),
    ).toBeInTheDocument();
    // … and the tape traffic on its own
    expect(
      screen.getByRole('img', { name: /Peak hourly rate .* by direction: migrate 3 MB\/s\.$/ }),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('img', { name: /by collection: MOD021KM.061 2 MB\/s/ }),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('img', { name: /^Ingest: 400 GB ingested over 1 days/ }),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('img', { name: /^Distribution: 1.20 TB distributed over 1 days/ }),
    ).toBeInTheDocument();
  });

  it('draws each direction’s target as a line on its own scale', async () => {
    renderApp('/dashboards');

    const ingest = await screen.findByRole('img', { name: /by direction: ingest 2 MB\/s/ });
    const chart = Chart.getChart(ingest as HTMLCanvasElement);
    expect(chart?.data.datasets.map((d) => d.label)).toEqual(['ingest', 'Target']);
    // 1e12 bytes a day over 86,400 s, in MB/s
    expect(chart?.data.datasets[1]?.data).toEqual([1e12 / 86_400 / 1e6, 1e12 / 86_400 / 1e6]);
  });

  it('says which part of a demo’s history is synthetic', async () => {
    server.use(
      http.get('/api/v1/demo/synthetic-history/', () =>
        HttpResponse.json({
          synthetic: true,
          first_day: '2026-10-29',
          until: '2026-11-27T00:37:00Z',
          note: 'The transfers before the demo was first seeded are synthetic.',
        }),
      ),
    );
    renderApp('/dashboards');

    expect(await screen.findByRole('note')).toHaveTextContent(
      'Demo data: The transfers before the demo was first seeded are synthetic. Synthetic ' +
        'from 2026-10-29 to 2026-11-27 00:37 UTC.',
    );
  });

  it('shows the API’s error words, never a blank page', async () => {
    server.use(
      http.get('/api/v1/metrics/today/', () =>
        HttpResponse.json(
          { detail: 'You do not have permission to perform this action.' },
          { status: 403 },
        ),
      ),
    );
    renderApp('/dashboards');

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load today’s figures');
    expect(alert).toHaveTextContent('You do not have permission to perform this action.');
    // The rest of the page still works.
    expect(await screen.findByRole('img', { name: /by collection/ })).toBeInTheDocument();
  });

  it('saves new daily targets with PUT', async () => {
    let put: unknown;
    server.use(
      http.put('/api/v1/metrics/targets/', async ({ request }) => {
        put = await request.json();
        return HttpResponse.json({ ingest: 1.5, distribution: 2 });
      }),
    );
    renderApp('/dashboards');

    const field = await screen.findByLabelText('Ingest target (TB/day)');
    await userEvent.clear(field);
    await userEvent.type(field, '1.5');
    await userEvent.click(screen.getByRole('button', { name: 'Save targets' }));

    await waitFor(() => expect(put).toEqual({ ingest: 1.5, distribution: 2 }));
    expect(await screen.findByText('Targets saved.')).toBeInTheDocument();
  });

  it('shows a refused target as the API words it', async () => {
    server.use(
      http.put('/api/v1/metrics/targets/', () =>
        HttpResponse.json({ detail: 'Only operators may change the targets.' }, { status: 403 }),
      ),
    );
    renderApp('/dashboards');

    const field = await screen.findByLabelText('Ingest target (TB/day)');
    await userEvent.clear(field);
    await userEvent.type(field, '3');
    await userEvent.click(screen.getByRole('button', { name: 'Save targets' }));

    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Only operators may change the targets.',
    );
  });

  it('tells a non-operator the dashboards are not for them', async () => {
    server.use(
      http.get('/api/v1/me/', () =>
        HttpResponse.json({
          authenticated: true,
          username: 'sci',
          email: '',
          role: 'user',
          roles: ['user'],
          providers: [],
        }),
      ),
    );
    renderApp('/dashboards');

    expect(
      await screen.findByText('The dashboards are for archive operators; sci is not one.'),
    ).toBeInTheDocument();
  });
});
