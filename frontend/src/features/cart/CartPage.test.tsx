import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type { Cart, SubsetOptions } from '../../lib/api/types';
import { rememberSearchArea } from '../../lib/searchArea';
import type { Geometry } from '../../lib/shapeParam';
import { renderApp } from '../../test/renderApp';
import { asUser, emptyCart, server } from '../../test/server';

const cart: Cart = {
  count: 2,
  bytes: 3_500_000,
  granules: [
    {
      granule: 11,
      collection: 'MOD10C1.061',
      granule_id: 'MOD10C1.A2026305.061.2026320093000',
      size: 1_500_000,
      in_cache: true,
      eta_s: null,
      added_at: '2026-11-03T09:00:00Z',
    },
    {
      granule: 12,
      collection: 'MOD021KM.061',
      granule_id: 'MOD021KM.A2026305.0005.061',
      size: 2_000_000,
      in_cache: false,
      eta_s: 240,
      added_at: '2026-11-03T09:01:00Z',
    },
  ],
  withdrawn: [],
  limits: { granules: 2000, bytes: 500e9, open_orders: 10, open_orders_used: 3 },
};

let orders: unknown[];
let estimates: (SubsetOptions | null)[];

/** The API's estimate: a tenth of the bytes per variable kept; a 400 for an unknown one. */
function estimateFor(subset: SubsetOptions | null) {
  const kept = subset?.variables?.length ?? 0;
  if (subset?.variables?.includes('nope')) {
    return HttpResponse.json({ detail: 'MOD10C1.061 has no variable nope.' }, { status: 400 });
  }
  return HttpResponse.json({
    cuts: subset !== null,
    bytes: 3_500_000,
    estimate: kept ? 350_000 * kept : 3_500_000,
    items: [],
    collections: [
      { collection: 'MOD10C1.061', subsettable: true, variables: ['lat', 'Day_CMG_Snow_Cover'] },
    ],
    formats: [
      { name: 'netcdf4', label: 'NetCDF-4 as delivered' },
      { name: 'zarr-zip', label: 'Zarr zipped' },
    ],
  });
}

beforeEach(() => {
  asUser();
  sessionStorage.clear();
  orders = [];
  estimates = [];
  server.use(
    http.get('/api/v1/cart/', () => HttpResponse.json(cart)),
    http.post('/api/v1/cart/subset/', async ({ request }) => {
      const { subset } = (await request.json()) as { subset: SubsetOptions | null };
      estimates.push(subset);
      return estimateFor(subset);
    }),
    http.post('/api/v1/orders/', async ({ request }) => {
      orders.push(await request.json());
      return HttpResponse.json({ id: 5, state: 'submitted' }, { status: 201 });
    }),
    http.get('/api/v1/orders/5/', () =>
      HttpResponse.json({ detail: 'not under test' }, { status: 404 }),
    ),
  );
});

describe('CartPage', () => {
  it('says which granules are in the disk cache and how long the tape recalls would take', async () => {
    renderApp('/cart');
    const table = await screen.findByRole('table');
    const rows = within(table).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('In cache');
    expect(rows[2]).toHaveTextContent('On tape');
    // 240 s is 4 minutes.
    expect(rows[2]).toHaveTextContent('recall about 4 min');
    const limits = screen.getByRole('region', { name: 'Before you order' });
    expect(limits).toHaveTextContent('1 of 2 on tape; recall about 4 min or more');
  });

  it('says when a recall cannot be estimated', async () => {
    server.use(
      http.get('/api/v1/cart/', () =>
        HttpResponse.json({
          ...cart,
          granules: [cart.granules[0], { ...cart.granules[1], eta_s: null }],
        }),
      ),
    );
    renderApp('/cart');
    const table = await screen.findByRole('table');
    expect(within(table).getAllByRole('row')[2]).toHaveTextContent('recall time unknown');
    expect(screen.getByRole('region', { name: 'Before you order' })).toHaveTextContent(
      'the recall time cannot be estimated now',
    );
  });

  it('says which granules were withdrawn since they were added, and when', async () => {
    server.use(
      http.get('/api/v1/cart/', () =>
        HttpResponse.json({
          ...cart,
          withdrawn: [
            {
              granule: 13,
              collection: 'MOD021KM.061',
              granule_id: 'MOD021KM.A2026305.0010.061',
              state: 'withdrawn',
              at: '2026-11-20T08:30:00Z',
              reason:
                'MOD021KM.061:MOD021KM.A2026305.0010.061 was withdrawn by an operator: bad orbit',
            },
          ],
        }),
      ),
    );
    renderApp('/cart');
    const notice = await screen.findByRole('region', {
      name: 'A granule in your cart was withdrawn',
    });
    expect(notice).toHaveTextContent(
      'MOD021KM.A2026305.0010.061: withdrawn on 2026-11-20 08:30 UTC.',
    );
    expect(notice).toHaveTextContent('bad orbit');
    expect(
      within(notice).getByRole('button', {
        name: 'Remove the withdrawn MOD021KM.A2026305.0010.061 from the cart',
      }),
    ).toBeEnabled();
  });

  it('says a cart all in the disk cache is ready at once', async () => {
    server.use(
      http.get('/api/v1/cart/', () =>
        HttpResponse.json({ ...cart, count: 1, granules: [cart.granules[0]] }),
      ),
    );
    renderApp('/cart');
    expect(await screen.findByRole('region', { name: 'Before you order' })).toHaveTextContent(
      'Ready at once',
    );
  });

  it('shows the total size and the limits before ordering', async () => {
    renderApp('/cart');
    const table = await screen.findByRole('table');
    expect(within(table).getAllByRole('row')).toHaveLength(4);
    expect(within(table).getByText('2 granules')).toBeInTheDocument();
    const limits = screen.getByRole('region', { name: 'Before you order' });
    expect(limits).toHaveTextContent('Total size3.50 MB');
    expect(limits).toHaveTextContent('Granules2 of 2,000 per order');
    expect(limits).toHaveTextContent('Size limit500 GB per order');
    expect(limits).toHaveTextContent('Open orders3 of 10 at once');
    expect(within(limits).queryByText(/most allowed/)).not.toBeInTheDocument();
  });

  it('warns before ordering when a limit would refuse the order', async () => {
    server.use(
      http.get('/api/v1/cart/', () =>
        HttpResponse.json({
          ...cart,
          limits: { granules: 1, bytes: 3e6, open_orders: 3, open_orders_used: 3 },
        }),
      ),
    );
    renderApp('/cart');
    const limits = await screen.findByRole('region', { name: 'Before you order' });
    expect(limits).toHaveTextContent('The cart holds 2 granules; one order may hold 1.');
    expect(limits).toHaveTextContent('The cart holds 3.50 MB; one order may hold 3.00 MB.');
    expect(limits).toHaveTextContent('You have 3 open orders, the most allowed');
  });

  it('orders the cart for HTTPS download and opens the order', async () => {
    const { router } = renderApp('/cart');
    await userEvent.click(
      await screen.findByRole('button', { name: 'Order 2 granules (3.50 MB)' }),
    );
    await waitFor(() => expect(router.state.location.pathname).toBe('/orders/5'));
    expect(orders).toEqual([{ delivery: 'https', destination: null }]);
  });

  it('shows the API’s refusal in its own words and stays on the cart', async () => {
    server.use(
      http.post('/api/v1/orders/', () =>
        HttpResponse.json(
          {
            detail:
              'limit_bytes: The order holds 3.5 GB; the limit is 1 GB (GRANARY_ORDER_MAX_GB). Split it into several orders.',
            errors: { limit_bytes: ['…'] },
          },
          { status: 400 },
        ),
      ),
    );
    const { router } = renderApp('/cart');
    await userEvent.click(await screen.findByRole('button', { name: /Order 2 granules/ }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The order was not placed');
    expect(alert).toHaveTextContent(
      'the limit is 1 GB (GRANARY_ORDER_MAX_GB). Split it into several orders.',
    );
    expect(alert).toHaveFocus();
    expect(router.state.location.pathname).toBe('/cart');
  });

  it('a subset shows its estimated size and goes with the order', async () => {
    const { router } = renderApp('/cart');
    await userEvent.click(await screen.findByRole('checkbox', { name: /Cut each file/ }));
    await userEvent.click(await screen.findByRole('checkbox', { name: 'Day_CMG_Snow_Cover' }));
    expect(screen.queryByRole('checkbox', { name: 'lat' })).toBeNull(); // coordinates stay
    const box = { West: '-10', South: '30', East: '20', North: '50' };
    for (const [side, value] of Object.entries(box)) {
      await userEvent.type(screen.getByLabelText(side), value);
    }
    await userEvent.selectOptions(screen.getByLabelText('Output format'), 'Zarr zipped');
    await waitFor(() =>
      expect(screen.getByRole('status')).toHaveTextContent(/About 350 KB of 3.50 MB/),
    );
    await waitFor(() =>
      expect(estimates.at(-1)).toMatchObject({ bbox: [-10, 30, 20, 50], format: 'zarr-zip' }),
    );
    // Asked once typing pauses: far fewer estimates than the 11 keystrokes and clicks above.
    expect(estimates.length).toBeLessThanOrEqual(4);
    await userEvent.click(screen.getByRole('button', { name: /Order 2 granules .*estimated/ }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/orders/5'));
    expect(orders).toEqual([
      {
        delivery: 'https',
        destination: null,
        subset: {
          variables: ['Day_CMG_Snow_Cover'],
          bbox: [-10, 30, 20, 50],
          start: null,
          end: null,
          format: 'zarr-zip',
        },
      },
    ]);
  });

  it("offers the search's own shape as the area and sends it as intersects", async () => {
    const shape = {
      type: 'Polygon',
      coordinates: [
        [
          [-10, 30],
          [20, 30],
          [5, 50],
          [-10, 30],
        ],
      ],
    };
    rememberSearchArea({ bbox: null, shape: shape as Geometry });
    const { router } = renderApp('/cart');
    await userEvent.click(await screen.findByRole('checkbox', { name: /Cut each file/ }));
    await userEvent.click(await screen.findByRole('button', { name: "Use the search's shape" }));
    expect(screen.getByText(/the search's shape, a polygon of 3 vertices/)).toBeInTheDocument();
    expect(screen.queryByLabelText('West')).toBeNull(); // the shape replaces the box
    await waitFor(() => expect(estimates.at(-1)).toMatchObject({ intersects: shape, bbox: null }));
    await userEvent.click(screen.getByRole('button', { name: /Order 2 granules .*estimated/ }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/orders/5'));
    expect(orders).toEqual([
      {
        delivery: 'https',
        destination: null,
        subset: {
          variables: [],
          bbox: null,
          intersects: shape,
          start: null,
          end: null,
          format: 'netcdf4',
        },
      },
    ]);
  });

  it('a push order goes to the destination chosen', async () => {
    server.use(
      http.get('/api/v1/destinations/', () =>
        HttpResponse.json([
          {
            id: 4,
            name: 'lab',
            path: '',
            folder: '/outbox/scientist/lab',
            created_at: '2026-11-01T00:00:00Z',
          },
        ]),
      ),
    );
    const { router } = renderApp('/cart');
    await userEvent.click(await screen.findByRole('radio', { name: /Push to a destination/ }));
    await userEvent.selectOptions(
      await screen.findByLabelText('Destination'),
      'lab (/outbox/scientist/lab)',
    );
    await userEvent.click(screen.getByRole('button', { name: /Order 2 granules/ }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/orders/5'));
    expect(orders).toEqual([{ delivery: 'push', destination: 4 }]);
  });

  it('removes a granule', async () => {
    server.use(
      http.delete('/api/v1/cart/11/', () =>
        HttpResponse.json({
          ...cart,
          count: 1,
          bytes: 2_000_000,
          granules: cart.granules.slice(1),
        }),
      ),
    );
    renderApp('/cart');
    await userEvent.click(
      await screen.findByRole('button', {
        name: 'Remove MOD10C1.A2026305.061.2026320093000 from the cart',
      }),
    );
    await waitFor(() =>
      expect(screen.queryByText('MOD10C1.A2026305.061.2026320093000')).not.toBeInTheDocument(),
    );
    expect(screen.getByText('1 granule')).toBeInTheDocument();
  });

  it('an empty cart points to the search', async () => {
    server.use(http.get('/api/v1/cart/', () => HttpResponse.json(emptyCart)));
    renderApp('/cart');
    expect(await screen.findByText('The cart is empty')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Search for granules' })).toHaveAttribute(
      'href',
      '/search',
    );
  });
});
