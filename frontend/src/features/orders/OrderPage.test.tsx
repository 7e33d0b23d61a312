import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { Order, OrderDetail, OrderItem, OrderLinks } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asUser, page, server } from '../../test/server';

/** The words the API sends for each state (`state_label`). */
const ORDER_WORDS: Record<Order['state'], string> = {
  submitted: 'Submitted',
  staging: 'Waiting for tape',
  ready: 'Ready',
  partially_ready: 'Ready in part',
  completed: 'Delivered',
  failed: 'Failed',
  cancelled: 'Cancelled',
  expired: 'Expired',
};
const ITEM_WORDS: Record<OrderItem['state'], string> = {
  waiting: 'Waiting',
  ready: 'Ready',
  failed: 'Failed',
  expired: 'Expired',
  cancelled: 'Cancelled',
  empty: 'Nothing inside the subset',
};

function item(overrides: Partial<OrderItem> = {}): OrderItem {
  return {
    id: 1,
    granule_pk: 11,
    granule: 'MOD10C1.061:MOD10C1.A2026305.061.2026320093000',
    file_id: 101,
    name: 'MOD10C1.A2026305.061.2026320093000.hdf',
    size: 1_024_000,
    checksum_type: 'MD5',
    checksum: '0cc175b9c0f1b6a831c399e269772661',
    state: 'ready',
    state_label: 'Ready',
    residency: 'cache',
    next_part: false,
    eta_s: null,
    error: '',
    ready_at: '2026-11-03T10:00:00Z',
    expires_at: '2026-11-10T10:00:00Z',
    downloaded_at: null,
    pushed_at: null,
    provenance: {},
    ...overrides,
  };
}

function order(given: OrderItem[], overrides: Partial<OrderDetail> = {}): OrderDetail {
  const items = given.map((i) => ({ ...i, state_label: ITEM_WORDS[i.state] }));
  const counts = { waiting: 0, ready: 0, failed: 0, expired: 0, cancelled: 0, empty: 0 };
  for (const i of items) counts[i.state] += 1;
  const state = overrides.state ?? 'ready';
  return {
    id: 7,
    user: 'scientist',
    state: 'ready',
    delivery: 'https',
    destination: null,
    subscription: null,
    total_bytes: items.reduce((sum, i) => sum + i.size, 0),
    counts,
    in_parts: items.some((i) => i.next_part),
    error: '',
    subset: {},
    created_at: '2026-11-03T09:59:00Z',
    updated_at: '2026-11-03T10:00:00Z',
    ready_at: null,
    expires_at: null,
    items,
    ...overrides,
    state_label: ORDER_WORDS[state],
  };
}

const fromTape = item({
  id: 2,
  granule_pk: 12,
  granule: 'MOD021KM.061:MOD021KM.A2026305.0005.061',
  file_id: 102,
  name: 'MOD021KM.A2026305.0005.061.hdf',
  size: 2_048_000,
  checksum: '92eb5ffee6ae2fec3ad71c777531578f',
  state: 'waiting',
  residency: 'tape',
  eta_s: 130,
  ready_at: null,
  expires_at: null,
});

function links(items: OrderItem[]): OrderLinks {
  return {
    order: 7,
    state: 'ready',
    state_label: 'Ready',
    expires_at: '2026-11-10T10:00:00Z',
    links: items
      .filter((i) => i.state === 'ready')
      .map((i) => ({
        item: i.id,
        file_id: i.file_id,
        granule: i.granule,
        name: i.name,
        size: i.size,
        checksum_type: i.checksum_type,
        checksum: i.checksum,
        url: `http://testserver/api/v1/files/${i.file_id}/download?order=7&expires=1&sig=s${i.file_id}`,
        expires_at: '2026-11-10T10:00:00Z',
      })),
    failed: [],
    waiting: [],
    empty: [],
    subset: null,
  };
}

beforeEach(() => asUser());

describe('OrderPage', () => {
  it('follows the order while a file comes back from tape, without a reload', async () => {
    const staging = order([item(), fromTape], { state: 'staging' });
    const ready = order(
      [item(), { ...fromTape, state: 'ready', residency: 'cache', eta_s: null }],
      {
        state: 'ready',
        expires_at: '2026-11-10T10:00:00Z',
      },
    );
    let calls = 0;
    server.use(
      http.get('/api/v1/orders/7/', () => {
        calls += 1;
        return HttpResponse.json(calls === 1 ? staging : ready);
      }),
      http.get('/api/v1/orders/7/links/', () =>
        HttpResponse.json(links(calls === 1 ? staging.items : ready.items)),
      ),
    );
    renderApp('/orders/7');

    const heading = await screen.findByRole('heading', { name: /Order 7/ });
    expect(heading).toHaveTextContent('Waiting for tape');
    expect(screen.getByRole('status')).toHaveTextContent(
      '1 of 2 files ready; 1 waiting for tape, ready in about 3 min.',
    );
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1) as [
      HTMLElement,
      HTMLElement,
    ];
    expect(rows[0]).toHaveTextContent('Ready');
    expect(
      await within(rows[0]).findByRole('link', { name: `Download ${item().name}` }),
    ).toHaveAttribute(
      'href',
      'http://testserver/api/v1/files/101/download?order=7&expires=1&sig=s101',
    );
    expect(rows[1]).toHaveTextContent('Waiting for tape, ready in about 3 min');
    expect(within(rows[1]).queryByRole('link', { name: /Download/ })).not.toBeInTheDocument();
    expect(rows[1]).toHaveTextContent('92eb5ffee6ae2fec3ad71c777531578f');

    // The page asks again on its own (every 2.5 s while staging) and shows the change.
    await waitFor(() => expect(heading).toHaveTextContent('Ready'), { timeout: 6000 });
    expect(screen.getByRole('status')).toHaveTextContent('2 of 2 files ready.');
    const after = within(screen.getByRole('table')).getAllByRole('row').slice(1) as [
      HTMLElement,
      HTMLElement,
    ];
    expect(
      await within(after[1]).findByRole('link', { name: `Download ${fromTape.name}` }),
    ).toHaveAttribute(
      'href',
      'http://testserver/api/v1/files/102/download?order=7&expires=1&sig=s102',
    );
    expect(screen.getByRole('link', { name: 'Download script' })).toHaveAttribute(
      'href',
      '/api/v1/orders/7/script/',
    );
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it('says an order larger than its share of the cache is staged in parts, and what brings the next part', async () => {
    const later = item({
      id: 4,
      file_id: 104,
      name: 'later.hdf',
      state: 'waiting',
      residency: 'tape',
      next_part: true,
      ready_at: null,
      expires_at: null,
    });
    const parts = order([item(), fromTape, later], { state: 'staging' });
    server.use(
      http.get('/api/v1/orders/7/', () => HttpResponse.json(parts)),
      http.get('/api/v1/orders/7/links/', () => HttpResponse.json(links(parts.items))),
    );
    renderApp('/orders/7');

    await screen.findByRole('heading', { name: /Order 7/ });
    expect(screen.getByRole('status')).toHaveTextContent(
      '1 of 3 files ready; 1 waiting for tape, ready in about 3 min; staged in parts: 1 more ' +
        'file is recalled as the ready ones are downloaded (the order is larger than its ' +
        'share of the cache).',
    );
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1) as [
      HTMLElement,
      HTMLElement,
      HTMLElement,
    ];
    expect(await within(rows[0]).findByRole('link', { name: /Download/ })).toBeInTheDocument();
    expect(rows[1]).toHaveTextContent('Waiting for tape, ready in about 3 min');
    expect(rows[2]).toHaveTextContent('Next part: recalled once the ready files are downloaded');
  });

  it('shows each file’s own state: a failed one with its reason beside the ready one', async () => {
    const failed = item({
      id: 3,
      file_id: 103,
      name: 'bad.hdf',
      state: 'failed',
      error: 'recall failed: no verified copy',
    });
    const partial = order([item(), failed], { state: 'partially_ready' });
    server.use(
      http.get('/api/v1/orders/7/', () => HttpResponse.json(partial)),
      http.get('/api/v1/orders/7/links/', () => HttpResponse.json(links(partial.items))),
    );
    renderApp('/orders/7');

    expect(await screen.findByRole('heading', { name: /Order 7/ })).toHaveTextContent(
      'Ready in part',
    );
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1) as [
      HTMLElement,
      HTMLElement,
    ];
    expect(rows[1]).toHaveTextContent('Failed');
    expect(rows[1]).toHaveTextContent('recall failed: no verified copy');
    expect(await within(rows[0]).findByRole('link', { name: /Download/ })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('1 of 2 files ready; 1 failed.');
  });

  it('a delivered order with a failed file says it was delivered in part, not wholly', async () => {
    const failed = item({ id: 3, file_id: 103, name: 'bad.hdf', state: 'failed', error: 'gone' });
    const done = order([item(), item({ id: 2, file_id: 102 }), failed], { state: 'completed' });
    server.use(
      http.get('/api/v1/orders/7/', () => HttpResponse.json(done)),
      http.get('/api/v1/orders/7/links/', () => HttpResponse.json(links(done.items))),
    );
    renderApp('/orders/7');

    expect(await screen.findByRole('heading', { name: /Order 7/ })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent(
      'Delivered in part: 2 of 3 files delivered, 1 failed (each file says why below).',
    );
  });

  it('before the archive has answered, says it is looking rather than guessing tape', async () => {
    const fresh = { ...fromTape, eta_s: null };
    const submitted = order([{ ...item(), state: 'waiting', residency: 'tape' }, fresh], {
      state: 'submitted',
    });
    server.use(http.get('/api/v1/orders/7/', () => HttpResponse.json(submitted)));
    renderApp('/orders/7');

    await screen.findByRole('heading', { name: /Order 7/ });
    expect(screen.getByRole('status')).toHaveTextContent(
      'Submitted: the archive is looking up where the 2 files are.',
    );
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1);
    for (const row of rows) expect(row).toHaveTextContent('Being prepared');
    expect(screen.queryByText(/Waiting for tape/)).not.toBeInTheDocument();
  });

  it('cancels after asking, and shows the API’s refusal in its words', async () => {
    const staging = order([fromTape], { state: 'staging' });
    server.use(
      http.get('/api/v1/orders/7/', () => HttpResponse.json(staging)),
      http.post('/api/v1/orders/7/cancel/', () =>
        HttpResponse.json({ detail: 'Order 7 is already completed.' }, { status: 409 }),
      ),
    );
    renderApp('/orders/7');

    await userEvent.click(await screen.findByRole('button', { name: 'Cancel order' }));
    await userEvent.click(screen.getByRole('button', { name: 'Yes, cancel it' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The order was not cancelled');
    expect(alert).toHaveTextContent('Order 7 is already completed.');
  });

  it('cancelling shows the cancelled order', async () => {
    let state: Order['state'] = 'staging';
    server.use(
      http.get('/api/v1/orders/7/', () =>
        HttpResponse.json(
          order([{ ...fromTape, state: state === 'cancelled' ? 'cancelled' : 'waiting' }], {
            state,
          }),
        ),
      ),
      http.post('/api/v1/orders/7/cancel/', () => {
        state = 'cancelled';
        return HttpResponse.json(order([], { state }));
      }),
    );
    renderApp('/orders/7');
    await userEvent.click(await screen.findByRole('button', { name: 'Cancel order' }));
    await userEvent.click(screen.getByRole('button', { name: 'Yes, cancel it' }));

    const heading = screen.getByRole('heading', { name: /Order 7/ });
    await waitFor(() => expect(heading).toHaveTextContent('Cancelled'));
    expect(screen.queryByRole('button', { name: 'Cancel order' })).not.toBeInTheDocument();
  });

  it('says why an order cannot be shown', async () => {
    server.use(
      http.get('/api/v1/orders/99/', () =>
        HttpResponse.json({ detail: 'There is no order 99 of yours.' }, { status: 404 }),
      ),
    );
    renderApp('/orders/99');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load order 99');
    expect(alert).toHaveTextContent('There is no order 99 of yours.');
  });
});

describe('OrdersPage', () => {
  it('lists the orders with their state and files', async () => {
    server.use(
      http.get('/api/v1/orders/', () =>
        HttpResponse.json(
          page<Order>([
            order([item(), fromTape], { id: 8, state: 'staging' }),
            order([item()], { id: 7, state: 'completed' }),
          ]),
        ),
      ),
    );
    renderApp('/orders');
    const rows = within(await screen.findByRole('table'))
      .getAllByRole('row')
      .slice(1) as [HTMLElement, HTMLElement];
    expect(within(rows[0]).getByRole('link', { name: 'Order 8' })).toHaveAttribute(
      'href',
      '/orders/8',
    );
    expect(rows[0]).toHaveTextContent('Waiting for tape');
    expect(rows[0]).toHaveTextContent('1 ready, 1 waiting');
    expect(rows[1]).toHaveTextContent('Delivered');
  });

  it('asks anonymous visitors to log in', async () => {
    server.use(
      http.get('/api/v1/me/', () =>
        HttpResponse.json({
          authenticated: false,
          username: '',
          email: '',
          role: 'anonymous',
          roles: [],
          providers: [],
        }),
      ),
    );
    renderApp('/orders');
    const main = await screen.findByRole('main');
    const login = await within(main).findByRole('link', { name: 'Log in' });
    expect(login).toHaveAttribute('href', '/login?next=%2Forders');
    expect(main).toHaveTextContent('Log in to see your orders.');
  });
});
