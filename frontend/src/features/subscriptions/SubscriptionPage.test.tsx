import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { Subscription } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asUser, page, server } from '../../test/server';
import { delivery, subscription } from './fixtures';

beforeEach(() => asUser());

describe('subscription page and delivery log', () => {
  it('describes the filter and lists the deliveries, newest first, with failures explained', async () => {
    server.use(
      http.get('/api/v1/subscriptions/7/', () => HttpResponse.json(subscription())),
      http.get('/api/v1/subscriptions/7/deliveries/', () =>
        HttpResponse.json(
          page([
            delivery(3, {
              state: 'failed',
              detail: 'scientist may no longer see MOD021KM.061',
              delivered_at: null,
              attempts: 2,
            }),
            delivery(2, { state: 'pending', detail: '', delivered_at: null }),
            delivery(1),
          ]),
        ),
      ),
    );
    renderApp('/subscriptions/7');

    expect(
      await screen.findByRole('heading', { name: /Fires over California/, level: 1 }),
    ).toHaveTextContent('Active');
    const summary = screen.getAllByRole('definition')[0]?.closest('dl') as HTMLElement;
    expect(summary).toHaveTextContent('125° W to 114° W, 32° N to 42° N');
    expect(summary).toHaveTextContent('1 Nov 2026 to 30 Nov 2026');
    expect(summary).toHaveTextContent('day_night = Day; cloud_cover < 20');
    expect(summary).toHaveTextContent('Notify me by email');

    const log = screen.getByRole('region', { name: 'Delivery log' });
    const rows = (await within(log).findAllByRole('row')).slice(1);
    expect(rows.map((row) => within(row).getByRole('rowheader').textContent)).toEqual([
      'MOD021KM.061:MOD021KM.A2026320.0003.061',
      'MOD021KM.061:MOD021KM.A2026320.0002.061',
      'MOD021KM.061:MOD021KM.A2026320.0001.061',
    ]);
    expect(rows[0]).toHaveTextContent('Failed');
    expect(rows[0]).toHaveTextContent('scientist may no longer see MOD021KM.061 (2 attempts)');
    expect(rows[1]).toHaveTextContent('Pending');
    expect(rows[2]).toHaveTextContent('Delivered');
    expect(rows[2]).toHaveTextContent('notified');
    expect(rows[2]).toHaveTextContent('21 Nov, 08:00 UTC');
  });

  it('shows a new delivery without a reload', async () => {
    let calls = 0;
    server.use(
      http.get('/api/v1/subscriptions/7/', () => HttpResponse.json(subscription())),
      http.get('/api/v1/subscriptions/7/deliveries/', () => {
        calls += 1;
        return HttpResponse.json(page(calls === 1 ? [] : [delivery(1)]));
      }),
    );
    renderApp('/subscriptions/7');
    expect(await screen.findByText('Nothing delivered yet')).toBeInTheDocument();
    expect(
      await screen.findByText('MOD021KM.061:MOD021KM.A2026320.0001.061', {}, { timeout: 8000 }),
    ).toBeInTheDocument();
  }, 10_000);

  it('pauses and resumes', async () => {
    let current: Subscription = subscription();
    const patches: unknown[] = [];
    server.use(
      http.get('/api/v1/subscriptions/7/', () => HttpResponse.json(current)),
      http.patch('/api/v1/subscriptions/7/', async ({ request }) => {
        const body = (await request.json()) as Partial<Subscription>;
        patches.push(body);
        current = { ...current, ...body };
        return HttpResponse.json(current);
      }),
      http.get('/api/v1/subscriptions/7/deliveries/', () => HttpResponse.json(page([]))),
    );
    renderApp('/subscriptions/7');
    await userEvent.click(await screen.findByRole('button', { name: 'Pause' }));
    expect(
      await screen.findByText('Paused: nothing is delivered until you resume it.'),
    ).toBeInTheDocument();
    expect(screen.getByRole('heading', { level: 1 })).toHaveTextContent('Paused');

    await userEvent.click(screen.getByRole('button', { name: 'Resume' }));
    expect(
      await screen.findByText('Resumed: new matching granules are delivered again.'),
    ).toBeInTheDocument();
    expect(patches).toEqual([{ active: false }, { active: true }]);
  });

  it('deletes only after confirming, and says why when the API refuses', async () => {
    let deleted = 0;
    server.use(
      http.get('/api/v1/subscriptions/7/', () =>
        HttpResponse.json(subscription({ mode: 'order' })),
      ),
      http.get('/api/v1/subscriptions/7/deliveries/', () => HttpResponse.json(page([]))),
      http.delete('/api/v1/subscriptions/7/', () => {
        deleted += 1;
        return deleted === 1
          ? HttpResponse.json(
              { detail: 'The database is read-only for maintenance.' },
              { status: 503 },
            )
          : new HttpResponse(null, { status: 204 });
      }),
      http.get('/api/v1/subscriptions/', () => HttpResponse.json(page([]))),
    );
    const { router } = renderApp('/subscriptions/7');
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('alertdialog');
    expect(dialog).toHaveTextContent('and so does its standing order with the links in it');
    expect(within(dialog).getByRole('button', { name: 'Delete subscription' })).toHaveFocus();

    await userEvent.click(within(dialog).getByRole('button', { name: 'Keep it' }));
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Delete' })).toHaveFocus());
    expect(deleted).toBe(0);

    await userEvent.click(screen.getByRole('button', { name: 'Delete' }));
    await userEvent.click(screen.getByRole('button', { name: 'Delete subscription' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The database is read-only for maintenance.',
    );

    await userEvent.click(screen.getByRole('button', { name: 'Delete subscription' }));
    expect(await screen.findByText('No subscriptions yet')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/subscriptions');
  });

  it('says so when the subscription is not yours', async () => {
    server.use(
      http.get('/api/v1/subscriptions/8/', () =>
        HttpResponse.json({ detail: 'There is no subscription 8 of yours.' }, { status: 404 }),
      ),
    );
    renderApp('/subscriptions/8');
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'There is no subscription 8 of yours.',
    );
  });
});

describe('subscriptions list', () => {
  it('lists subscriptions with their filters and pauses one', async () => {
    let rows: Subscription[] = [
      subscription(),
      subscription({
        id: 8,
        name: 'Snow',
        collections: ['MOD10C1.061'],
        bbox: null,
        start: null,
        end: null,
        conditions: [],
        active: false,
        mode: 'push',
        destination: 3,
      }),
    ];
    server.use(
      http.get('/api/v1/subscriptions/', () => HttpResponse.json(page(rows))),
      http.patch('/api/v1/subscriptions/7/', async ({ request }) => {
        const body = (await request.json()) as Partial<Subscription>;
        rows = rows.map((row) => (row.id === 7 ? { ...row, ...body } : row));
        return HttpResponse.json(rows[0]);
      }),
    );
    renderApp('/subscriptions');
    const fires = await screen.findByRole('row', { name: /Fires over California/ });
    expect(fires).toHaveTextContent('MOD021KM.061');
    expect(fires).toHaveTextContent('Active');
    const snow = screen.getByRole('row', { name: /Snow/ });
    expect(snow).toHaveTextContent('Anywhere');
    expect(snow).toHaveTextContent('Any time');
    expect(snow).toHaveTextContent('Push into a destination (folder or SFTP)');
    expect(snow).toHaveTextContent('Paused');
    expect(within(snow).getByRole('link', { name: 'Snow' })).toHaveAttribute(
      'href',
      '/subscriptions/8',
    );

    await userEvent.click(
      within(fires).getByRole('button', { name: 'Pause Fires over California' }),
    );
    await waitFor(() =>
      expect(screen.getByRole('row', { name: /Fires over California/ })).toHaveTextContent(
        'Paused',
      ),
    );
  });

  it('invites a first subscription', async () => {
    server.use(http.get('/api/v1/subscriptions/', () => HttpResponse.json(page([]))));
    renderApp('/subscriptions');
    expect(await screen.findByText('No subscriptions yet')).toBeInTheDocument();
    expect(screen.getAllByRole('link', { name: /New subscription|Create one/ })).toHaveLength(2);
  });
});
