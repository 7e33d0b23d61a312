import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { Chart } from '../../lib/chart';
import type { GranuleFacets, Timeline } from '../../lib/api/types';
import type { BoxMapProps } from '../../components/map/types';
import { granule } from '../../test/granules';
import { renderApp } from '../../test/renderApp';
import { asUser, collection, emptyCart, page, server } from '../../test/server';

// Leaflet is exercised in the browser journey; here a stand-in map reports what it was given
// and draws a box on demand, as a drag would.
vi.mock('../../components/map/LazyBoxMap', () => ({
  LazyBoxMap: ({ label, box, footprints = [], onBoxChange }: BoxMapProps) => (
    <div role="region" aria-label={label}>
      <p>map box: {box ? box.join(',') : 'none'}</p>
      <p>{footprints.length} footprints</p>
      <button type="button" onClick={() => onBoxChange?.([-20, 10, 40, 50])}>
        draw a box on the test map
      </button>
    </div>
  ),
}));

const modis = collection();
const snow = collection({
  id: 2,
  short_name: 'MOD10C1',
  title: 'MODIS/Terra Snow Cover Daily L3',
  processing_level: '3',
});

const facets: GranuleFacets = {
  collection: [
    { value: 'MOD021KM.061', count: 12 },
    { value: 'MOD10C1.061', count: 3 },
  ],
  processing_level: [
    { value: '1B', count: 12 },
    { value: '3', count: 3 },
  ],
  platform: [{ value: 'Terra', count: 15 }],
  instrument: [{ value: 'MODIS', count: 15 }],
};

/** Every granule request's query string, in order; the separate counting requests made. */
let asked: URLSearchParams[];
let separate: string[];
/** Every collection list request's query string, in order. */
let collectionAsks: URLSearchParams[];

const timeline: Timeline = {
  bucket: 'day',
  total: 15,
  buckets: [
    { start: '2026-11-01T00:00:00Z', count: 12 },
    { start: '2026-11-02T00:00:00Z', count: 0 },
    { start: '2026-11-03T00:00:00Z', count: 3 },
  ],
};

beforeEach(() => {
  asked = [];
  separate = [];
  collectionAsks = [];
  server.use(
    http.get('/api/v1/granules/timeline/', () => {
      separate.push('timeline');
      return HttpResponse.json(timeline);
    }),
    http.get('/api/v1/collections/', ({ request }) => {
      collectionAsks.push(new URL(request.url).searchParams);
      const q = new URL(request.url).searchParams.get('q');
      return HttpResponse.json(page(q === 'snow' ? [snow] : q === 'landsat' ? [] : [modis, snow]));
    }),
    http.get('/api/v1/granules/facets/', () => {
      separate.push('facets');
      return HttpResponse.json(facets);
    }),
    http.get('/api/v1/granules/', ({ request }) => {
      const params = new URL(request.url).searchParams;
      asked.push(params);
      // include=facets,timeline: the page carries them (the API's one request for the page)
      const summary = params.get('include') === 'facets,timeline' ? { facets, timeline } : {};
      if (params.get('cursor') === 'page2') {
        return HttpResponse.json({
          ...page([granule({ id: 3, residency: 'tape' })], {
            previous: 'http://testserver/api/v1/granules/?limit=20',
          }),
          ...summary,
        });
      }
      return HttpResponse.json({
        ...summary,
        ...page(
          [
            granule({ id: 1, total_size: 1_234_567, residency: 'cache' }),
            granule({ id: 2, total_size: 2_500_000_000, residency: 'tape', bbox: null }),
          ],
          { next: 'http://testserver/api/v1/granules/?cursor=page2&limit=20' },
        ),
      });
    }),
  );
});

function lastAsked(): Record<string, string> {
  return Object.fromEntries(asked.at(-1) ?? []);
}

describe('SearchPage', () => {
  it('offers the wildcard search when an id typed without * finds nothing', async () => {
    server.use(
      http.get('/api/v1/granules/', ({ request }) => {
        const q = new URL(request.url).searchParams.get('q');
        return HttpResponse.json(page(q === 'MOD021KM.A2026305*' ? [granule({ id: 1 })] : []));
      }),
    );
    const user = userEvent.setup();
    renderApp('/search?q=MOD021KM.A2026305');
    await screen.findByText('No granules match');
    const offer = await screen.findByRole('button', { name: 'Search for MOD021KM.A2026305*' });
    expect(offer.closest('p')).toHaveTextContent('1 granule');
    await user.click(offer);
    expect(await screen.findByText('MOD021KM.A2026305.0001.061')).toBeInTheDocument();
  });

  it('offers no wildcard for plain words', async () => {
    server.use(http.get('/api/v1/granules/', () => HttpResponse.json(page([]))));
    renderApp('/search?q=landsat');
    await screen.findByText('No granules match');
    expect(screen.queryByRole('button', { name: /Search for/ })).not.toBeInTheDocument();
  });

  it('reads the whole search from the address and asks the API for it', async () => {
    renderApp(
      '/search?collection=MOD021KM.061&start=2026-11-01&end=2026-11-02&bbox=-10,20,30,40&day_night=Day&cloud_below=30',
    );

    await screen.findByText('MOD021KM.A2026305.0001.061');
    expect(lastAsked()).toEqual({
      collection: 'MOD021KM.061',
      start: '2026-11-01',
      end: '2026-11-02',
      bbox: '-10,20,30,40',
      'attr.day_night': 'Day',
      'attr.cloud_cover.lt': '30',
      limit: '20',
      include: 'facets,timeline',
    });
    // The results, the facets and the timeline came in that one request.
    expect(separate).toEqual([]);
    const form = screen.getByRole('search', { name: 'Granule search' });
    expect(within(form).getByLabelText('From')).toHaveValue('2026-11-01');
    expect(within(form).getByLabelText('To')).toHaveValue('2026-11-02');
    expect(within(form).getByLabelText('West')).toHaveValue(-10);
    expect(within(form).getByLabelText('North')).toHaveValue(40);
    expect(within(form).getByLabelText('Day or night')).toHaveValue('Day');
    expect(within(form).getByLabelText('Cloud cover below (%)')).toHaveValue(30);
    expect(within(form).getByRole('checkbox', { name: /MOD021KM\.061/ })).toBeChecked();
    expect(screen.getByText('map box: -10,20,30,40')).toBeInTheDocument();
  });

  it('writes what the form says into the address, so the search can be shared', async () => {
    const { router } = renderApp('/search');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    const form = screen.getByRole('search', { name: 'Granule search' });

    await userEvent.type(within(form).getByLabelText('From'), '2026-11-01');
    await userEvent.type(within(form).getByLabelText('To'), '2026-11-03');
    await userEvent.type(within(form).getByLabelText('West'), '-20');
    await userEvent.type(within(form).getByLabelText('South'), '10');
    await userEvent.type(within(form).getByLabelText('East'), '40');
    await userEvent.type(within(form).getByLabelText('North'), '50');
    await userEvent.type(within(form).getByLabelText('Cloud cover below (%)'), '20');
    await userEvent.click(within(form).getByRole('button', { name: 'Search' }));

    await waitFor(() =>
      expect(router.state.location.search).toBe(
        '?start=2026-11-01&end=2026-11-03&bbox=-20%2C10%2C40%2C50&cloud_below=20',
      ),
    );
    await waitFor(() => expect(lastAsked().bbox).toBe('-20,10,40,50'));
    expect(lastAsked()).toMatchObject({
      start: '2026-11-01',
      end: '2026-11-03',
      'attr.cloud_cover.lt': '20',
    });

    // Choices apply at once, keeping what was typed.
    await userEvent.selectOptions(within(form).getByLabelText('Day or night'), 'Night');
    await waitFor(() => expect(router.state.location.search).toContain('day_night=Night'));
    expect(router.state.location.search).toContain('start=2026-11-01');
    await waitFor(() => expect(lastAsked()['attr.day_night']).toBe('Night'));
  });

  it('a box drawn on the map becomes the search box', async () => {
    const { router } = renderApp('/search?start=2026-11-01');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    expect(screen.getByText('1 footprints')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'draw a box on the test map' }));
    await waitFor(() =>
      expect(router.state.location.search).toBe('?start=2026-11-01&bbox=-20%2C10%2C40%2C50'),
    );
    expect(await screen.findByLabelText('East')).toHaveValue(40);
    await waitFor(() => expect(lastAsked().bbox).toBe('-20,10,40,50'));
  });

  it('says what is missing from a half-typed box instead of searching', async () => {
    const { router } = renderApp('/search');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    const form = screen.getByRole('search', { name: 'Granule search' });
    await userEvent.type(within(form).getByLabelText('West'), '5');
    await userEvent.click(within(form).getByRole('button', { name: 'Search' }));

    expect(within(form).getByRole('alert')).toHaveTextContent(
      'Give all four edges of the box, or none.',
    );
    expect(within(form).getByLabelText('West')).toHaveAttribute('aria-invalid', 'true');
    expect(router.state.location.search).toBe('');
  });

  it('sends the free text to the granule search, so a granule id pattern finds granules', async () => {
    const { router } = renderApp('/search');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    const form = screen.getByRole('search', { name: 'Granule search' });
    await userEvent.type(
      within(form).getByLabelText('Granule id or words'),
      'MOD021KM.A2026*.0001',
    );
    await userEvent.click(within(form).getByRole('button', { name: 'Search' }));

    await waitFor(() => expect(router.state.location.search).toBe('?q=MOD021KM.A2026*.0001'));
    await waitFor(() => expect(lastAsked().q).toBe('MOD021KM.A2026*.0001'));
    expect(lastAsked().collection).toBeUndefined();
    expect(lastAsked()).toEqual({
      q: 'MOD021KM.A2026*.0001',
      limit: '20',
      include: 'facets,timeline',
    });
  });

  it('keeps the order and the page size in the address and asks the API for them', async () => {
    const { router } = renderApp('/search?start=2026-11-01');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    expect(lastAsked().ordering).toBeUndefined();

    await userEvent.selectOptions(screen.getByLabelText('Sort'), 'Name, Z to A');
    await waitFor(() =>
      expect(router.state.location.search).toBe('?start=2026-11-01&sort=-granule_id'),
    );
    await waitFor(() => expect(lastAsked().ordering).toBe('-granule_id'));

    await userEvent.selectOptions(screen.getByLabelText('Per page'), '100');
    await waitFor(() => expect(router.state.location.search).toContain('per_page=100'));
    await waitFor(() =>
      expect(lastAsked()).toMatchObject({ limit: '100', ordering: '-granule_id' }),
    );
    expect(screen.getByLabelText('Sort')).toHaveValue('-granule_id');
  });

  it('shows browse images lazily in a fixed box, with alt text', async () => {
    server.use(
      http.get('/api/v1/granules/', () =>
        HttpResponse.json(
          page([granule({ id: 7, browse_url: '/api/v1/granules/7/browse/' }), granule({ id: 8 })]),
        ),
      ),
    );
    renderApp('/search');
    const image = await screen.findByRole('img', {
      name: 'Browse image of MOD021KM.A2026305.0007.061',
    });
    expect(image).toHaveAttribute('src', '/api/v1/granules/7/browse/');
    expect(image).toHaveAttribute('loading', 'lazy');
    expect(image).toHaveAttribute('width', '64');
    expect(image).toHaveAttribute('height', '64');
    expect(screen.queryByRole('img', { name: /0008/ })).not.toBeInTheDocument();
  });

  it('draws the timeline of the search with its numbers', async () => {
    renderApp('/search?q=snow');
    const figure = await screen.findByRole('figure', { name: 'When the granules start' });
    const canvas = within(figure).getByRole('img');
    const chart = Chart.getChart(canvas as HTMLCanvasElement);
    expect(chart?.data.labels).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(chart?.data.datasets[0]?.data).toEqual([12, 0, 3]);
    expect(figure).toHaveTextContent('15 granules from 2026-11-01 to 2026-11-03, counted per day');
  });

  it('adds every granule the search matches to the cart, or shows why not', async () => {
    asUser();
    const bodies: unknown[] = [];
    let refuse = false;
    server.use(
      http.post('/api/v1/cart/matching/', async ({ request }) => {
        bodies.push(await request.json());
        if (refuse) {
          return HttpResponse.json(
            { detail: 'The search matches 15 granules; a cart holds at most 10.' },
            { status: 400 },
          );
        }
        return HttpResponse.json({ matched: 15, added: 15, cart: { ...emptyCart, count: 15 } });
      }),
    );
    renderApp('/search?q=MOD021KM*&start=2026-11-01&sort=granule_id');
    const button = await screen.findByRole('button', { name: 'Add all 15 matching to cart' });
    await userEvent.click(button);
    expect(await screen.findByRole('status')).toHaveTextContent('Added 15 of 15.');
    expect(bodies).toEqual([{ filters: { q: 'MOD021KM*', start: '2026-11-01' } }]);

    refuse = true;
    await userEvent.click(button);
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The search matches 15 granules; a cart holds at most 10.',
    );
  });

  it('facets offer their values with counts and apply at once', async () => {
    const { router } = renderApp('/search');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    const level = screen.getByLabelText('Processing level');
    expect(within(level).getByRole('option', { name: '1B (12)' })).toBeInTheDocument();

    await userEvent.selectOptions(level, '1B');
    await waitFor(() => expect(router.state.location.search).toBe('?level=1B'));
    await waitFor(() => expect(lastAsked().processing_level).toBe('1B'));
    expect(lastAsked().collection).toBeUndefined();
  });

  it('asks for the collections once while the search narrows, pages and is come back to', async () => {
    const { router } = renderApp('/search');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    const form = screen.getByRole('group', { name: 'Search in' });
    expect(within(form).getByText('MOD10C1.061')).toBeInTheDocument();

    await userEvent.selectOptions(screen.getByLabelText('Processing level'), '1B');
    await waitFor(() => expect(lastAsked().processing_level).toBe('1B'));
    // the form narrows the list itself: the level 3 collection leaves it
    await waitFor(() => expect(within(form).queryByText('MOD10C1.061')).toBeNull());
    expect(within(form).getByText('MOD021KM.061')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('link', { name: /Next/ }));
    await screen.findByText('MOD021KM.A2026305.0003.061');
    await router.navigate('/login');
    await router.navigate(-1);
    await screen.findByText('MOD021KM.A2026305.0003.061');
    expect(router.state.location.search).toBe('?level=1B&cursor=page2');
    expect(collectionAsks.map((params) => params.toString())).toEqual(['limit=100']);
  });

  it('asks the API to narrow the collections when they do not fit in one page', async () => {
    server.use(
      http.get('/api/v1/collections/', ({ request }) => {
        const params = new URL(request.url).searchParams;
        collectionAsks.push(params);
        return HttpResponse.json(
          params.get('processing_level') === '1B'
            ? page([modis])
            : page([modis, snow], { next: 'http://testserver/api/v1/collections/?cursor=c2' }),
        );
      }),
    );
    renderApp('/search');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    await userEvent.selectOptions(screen.getByLabelText('Processing level'), '1B');
    const form = screen.getByRole('group', { name: 'Search in' });
    await waitFor(() => expect(within(form).queryByText('MOD10C1.061')).toBeNull());
    expect(collectionAsks.map((params) => params.get('processing_level'))).toEqual([null, '1B']);
  });

  it('asks a later page alone and keeps the first page’s facets and timeline', async () => {
    const { router } = renderApp('/search?level=1B');
    await screen.findByText('15 granules match; showing 2');
    expect(lastAsked().include).toBe('facets,timeline');

    await userEvent.click(screen.getByRole('link', { name: /Next/ }));
    await screen.findByText('MOD021KM.A2026305.0003.061');
    expect(router.state.location.search).toBe('?level=1B&cursor=page2');
    // The page alone: its filters are the first page's, so are its counts.
    expect(asked.map((params) => [params.get('cursor'), params.get('include')])).toEqual([
      [null, 'facets,timeline'],
      ['page2', null],
    ]);
    expect(screen.getByText('15 granules match; showing 1')).toBeInTheDocument();
    expect(screen.getByLabelText('Processing level')).toHaveTextContent('1B (12)');
    expect(separate).toEqual([]);
  });

  it('opened at a later page, asks the first page once for the counts', async () => {
    renderApp('/search?cursor=page2');
    await screen.findByText('MOD021KM.A2026305.0003.061');
    expect(await screen.findByText('15 granules match; showing 1')).toBeInTheDocument();
    const asks = asked.map((params) => [params.get('cursor'), params.get('include')]);
    expect(asks.sort()).toEqual(
      [
        ['page2', null],
        [null, 'facets,timeline'],
      ].sort(),
    );
  });

  it('shows sizes, in-cache and on-tape badges and pages with the cursor', async () => {
    const { router } = renderApp('/search');
    const results = await screen.findByRole('region', { name: 'Results' });
    const table = await within(results).findByRole('table');
    const [first, second] = within(table).getAllByRole('row').slice(1) as [
      HTMLElement,
      HTMLElement,
    ];
    expect(first).toHaveTextContent('1.23 MB');
    expect(within(first).getByText('In cache')).toBeInTheDocument();
    expect(second).toHaveTextContent('2.50 GB');
    expect(within(second).getByText('On tape')).toBeInTheDocument();
    expect(first).toHaveTextContent('2026-11-01 00:05–00:10 UTC');
    expect(screen.getByText('15 granules match; showing 2')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('link', { name: /Next/ }));
    expect(await screen.findByText('MOD021KM.A2026305.0003.061')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?cursor=page2');
    expect(lastAsked().cursor).toBe('page2');

    await userEvent.click(screen.getByRole('link', { name: /Previous/ }));
    expect(await screen.findByText('MOD021KM.A2026305.0001.061')).toBeInTheDocument();
    expect(router.state.location.search).toBe('');
  });

  it('shows the API’s own words when it refuses the search', async () => {
    server.use(
      http.get('/api/v1/granules/', () =>
        HttpResponse.json(
          { detail: 'bbox: bbox south (50) is north of its north (10)', errors: { bbox: ['…'] } },
          { status: 400 },
        ),
      ),
    );
    renderApp('/search?bbox=0,50,10,10');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The search could not be run');
    expect(alert).toHaveTextContent('bbox: bbox south (50) is north of its north (10)');
  });

  it('asks anonymous visitors to log in before ordering', async () => {
    renderApp('/search');
    await screen.findByText('MOD021KM.A2026305.0001.061');
    const results = screen.getByRole('region', { name: 'Results' });
    expect(within(results).getByRole('link', { name: 'Log in' })).toHaveAttribute(
      'href',
      '/login?next=%2Fsearch',
    );
    expect(screen.queryByRole('button', { name: /Add .* to the cart/ })).not.toBeInTheDocument();
  });

  it('adds a granule to the cart and says it is there', async () => {
    asUser();
    const added: unknown[] = [];
    server.use(
      http.post('/api/v1/cart/', async ({ request }) => {
        added.push(await request.json());
        return HttpResponse.json({
          ...emptyCart,
          count: 1,
          bytes: 1_234_567,
          granules: [
            {
              granule: 1,
              collection: 'MOD021KM.061',
              granule_id: 'MOD021KM.A2026305.0001.061',
              size: 1_234_567,
              added_at: '2026-11-03T00:00:00Z',
            },
          ],
        });
      }),
    );
    renderApp('/search');
    await userEvent.click(
      await screen.findByRole('button', { name: 'Add MOD021KM.A2026305.0001.061 to the cart' }),
    );

    expect(
      await screen.findByRole('link', {
        name: 'MOD021KM.A2026305.0001.061 is in the cart: open the cart',
      }),
    ).toBeInTheDocument();
    expect(added).toEqual([{ granules: [1] }]);
    expect(screen.getByRole('link', { name: 'Cart, 1 granule' })).toBeInTheDocument();
  });
});
