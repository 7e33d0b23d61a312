import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import type { BoxMapProps } from '../../components/map/types';
import type { SubscriptionBody } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asUser, collection, page, server } from '../../test/server';
import { subscription } from './fixtures';

const POINT = { type: 'Point' as const, coordinates: [-150.5, 61.2] };
const POLYGON = {
  type: 'Polygon' as const,
  coordinates: [
    [
      [170, -10],
      [-170, -10],
      [-170, 10],
      [170, -10],
    ],
  ],
};

vi.mock('../../components/map/LazyBoxMap', () => ({
  LazyBoxMap: ({ label, box, onBoxChange, shape, onShapeChange }: BoxMapProps) => (
    <div
      role="region"
      aria-label={label}
      data-box={box?.join(',') ?? ''}
      data-shape={shape ? JSON.stringify(shape) : ''}
    >
      {onBoxChange && (
        <button type="button" onClick={() => onBoxChange([100.12345, -5, 120, 10])}>
          Draw a box
        </button>
      )}
      {onShapeChange && (
        <button type="button" onClick={() => onShapeChange(POINT)}>
          Place a point
        </button>
      )}
    </div>
  ),
}));

const modis = collection();
const snow = collection({ id: 2, short_name: 'MOD10C1', title: 'MODIS Snow Cover Daily L3' });
let created: SubscriptionBody[];
let collectionQueries: URLSearchParams[];

beforeEach(() => {
  asUser();
  created = [];
  collectionQueries = [];
  server.use(
    http.get('/api/v1/collections/', ({ request }) => {
      const params = new URL(request.url).searchParams;
      collectionQueries.push(params);
      return HttpResponse.json(page(params.get('q') === 'snow' ? [snow] : [modis, snow]));
    }),
    http.post('/api/v1/subscriptions/preview/', () =>
      HttpResponse.json({ count: 3, days: 30, since: '2026-10-23T10:00:00Z', sample: [] }),
    ),
    http.post('/api/v1/subscriptions/', async ({ request }) => {
      const body = (await request.json()) as SubscriptionBody;
      if (body.name === 'Taken') {
        return HttpResponse.json(
          {
            detail: 'name: You already have a subscription named Taken: choose another name.',
            errors: { name: ['You already have a subscription named Taken: choose another name.'] },
          },
          { status: 400 },
        );
      }
      created.push(body);
      return HttpResponse.json(subscription({ id: 9, ...body, bbox: null }), { status: 201 });
    }),
    http.get('/api/v1/subscriptions/9/', () => HttpResponse.json(subscription({ id: 9 }))),
    http.get('/api/v1/subscriptions/9/deliveries/', () => HttpResponse.json(page([]))),
  );
});

describe('subscribe to a search', () => {
  it('is offered on the search page with the search carried in its link', async () => {
    server.use(
      http.get('/api/v1/granules/', () => HttpResponse.json(page([]))),
      http.get('/api/v1/granules/facets/', () =>
        HttpResponse.json({
          collections: [],
          processing_levels: [],
          platforms: [],
          instruments: [],
        }),
      ),
    );
    renderApp('/search?collection=MOD10C1.061&start=2026-11-01&cursor=abc');
    const link = await screen.findByRole('link', { name: 'Subscribe to this search' });
    expect(link).toHaveAttribute(
      'href',
      '/subscriptions/new?collection=MOD10C1.061&start=2026-11-01',
    );
  });

  it('fills the form with the collections, dates, box and conditions of the search', async () => {
    renderApp(
      '/subscriptions/new?collection=MOD10C1.061&start=2026-11-01&end=2026-11-05' +
        '&bbox=-10,20,15,40&day_night=Day&cloud_below=30',
    );
    expect(await screen.findByText(/Filled in from your search/)).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Chosen collections' })).toHaveTextContent(
      'MOD10C1.061',
    );
    expect(screen.getByRole('region', { name: 'Area of the subscription' })).toHaveAttribute(
      'data-box',
      '-10,20,15,40',
    );
    await userEvent.type(screen.getByLabelText('Name'), 'Snow from search');
    await userEvent.click(screen.getByRole('button', { name: 'Create subscription' }));

    await screen.findByRole('heading', { level: 1 });
    expect(created).toEqual([
      {
        name: 'Snow from search',
        collections: ['MOD10C1.061'],
        bbox: [-10, 20, 15, 40],
        start: '2026-11-01',
        end: '2026-11-05',
        conditions: [
          { name: 'day_night', op: 'eq', value: 'Day' },
          { name: 'cloud_cover', op: 'lt', value: 30 },
        ],
        new_versions: false,
        mode: 'notify',
        destination: null,
      },
    ]);
  });

  it('turns the search’s free text into the collections it matched', async () => {
    renderApp('/subscriptions/new?q=snow');
    expect(await screen.findByText(/the collections matching “snow”/)).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Chosen collections' })).toHaveTextContent(
      'MOD10C1.061',
    );
    expect(collectionQueries.some((params) => params.get('q') === 'snow')).toBe(true);
  });

  it("carries the search's polygon and sends it as intersects, without a box", async () => {
    renderApp(
      `/subscriptions/new?collection=MOD10C1.061&shape=${encodeURIComponent(JSON.stringify(POLYGON))}`,
    );
    expect(await screen.findByText(/Within a polygon of 3 vertices/)).toBeInTheDocument();
    const map = screen.getByRole('region', { name: 'Area of the subscription' });
    expect(JSON.parse(map.getAttribute('data-shape')!)).toEqual(POLYGON);
    expect(screen.getByLabelText('West')).toHaveValue(null);
    await userEvent.type(screen.getByLabelText('Name'), 'Across 180');
    await userEvent.click(screen.getByRole('button', { name: 'Create subscription' }));
    await screen.findByRole('heading', { level: 1 });
    expect(created[0]?.intersects).toEqual(POLYGON);
    expect(created[0]?.bbox).toBeNull();
  });

  it('a point placed on the map replaces the box; typing a side replaces the point', async () => {
    renderApp('/subscriptions/new?bbox=-10,20,15,40&collection=MOD10C1.061');
    const map = await screen.findByRole('region', { name: 'Area of the subscription' });
    await userEvent.click(within(map).getByRole('button', { name: 'Place a point' }));
    expect(screen.getByText('Within the point 61.2, -150.5.')).toBeInTheDocument();
    expect(screen.getByLabelText('West')).toHaveValue(null);
    expect(map).toHaveAttribute('data-box', '');
    await userEvent.type(screen.getByLabelText('West'), '5');
    expect(map).toHaveAttribute('data-shape', '');
    expect(screen.queryByText(/Within the point/)).not.toBeInTheDocument();
  });

  it('draws the box on the map into the four sides', async () => {
    renderApp('/subscriptions/new');
    const map = await screen.findByRole('region', { name: 'Area of the subscription' });
    await userEvent.click(within(map).getByRole('button', { name: 'Draw a box' }));
    expect(screen.getByLabelText('West')).toHaveValue(100.123);
    expect(screen.getByLabelText('North')).toHaveValue(10);
    expect(map).toHaveAttribute('data-box', '100.123,-5,120,10');
  });

  it('says on the name field that the name is taken', async () => {
    renderApp('/subscriptions/new?collection=MOD10C1.061');
    await userEvent.type(await screen.findByLabelText('Name'), 'Taken');
    await userEvent.click(screen.getByRole('button', { name: 'Create subscription' }));
    const name = screen.getByLabelText('Name');
    expect(name).toHaveAttribute('aria-invalid', 'true');
    expect(
      await screen.findAllByText(
        'You already have a subscription named Taken: choose another name.',
      ),
    ).not.toHaveLength(0);
    expect(name).toHaveAccessibleDescription(/already have a subscription named Taken/);
  });
});
