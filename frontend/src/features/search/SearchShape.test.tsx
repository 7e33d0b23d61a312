import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import type { Granule, ShapeReading, Timeline } from '../../lib/api/types';
import type { BoxMapProps } from '../../components/map/types';
import { granule } from '../../test/granules';
import { renderApp } from '../../test/renderApp';
import { collection, page, server } from '../../test/server';

/** A closed ring round a box. */
const ring = (west: number, south: number, east: number, north: number) => [
  [west, south],
  [east, south],
  [east, north],
  [west, north],
  [west, south],
];

// A polygon drawn across the antimeridian (lon 170 to -170), as the map's tool reports it: cut
// at 180 (RFC 7946), as the API reads shapes on the plane.
const ACROSS = {
  type: 'MultiPolygon' as const,
  coordinates: [[ring(170, -10, 180, 10)], [ring(-180, -10, -170, 10)]],
};

// Leaflet is exercised in the browser journey; this map reports what it was given, draws a
// polygon on demand as the drawing tool would, and shows the page's extra tools (the upload).
vi.mock('../../components/map/LazyBoxMap', () => ({
  LazyBoxMap: ({ label, shape, footprints = [], onShapeChange, tools }: BoxMapProps) => (
    <div role="region" aria-label={label}>
      <p>map shape: {shape ? JSON.stringify(shape) : 'none'}</p>
      <p>
        footprints drawn:{' '}
        {footprints.map((f) => (f.footprint ? f.footprint.type : 'box')).join(', ')}
      </p>
      <button type="button" onClick={() => onShapeChange?.(ACROSS)}>
        draw a polygon on the test map
      </button>
      {tools}
    </div>
  ),
}));

const FOOTPRINT = {
  type: 'MultiPolygon' as const,
  coordinates: [[ring(175, -5, 180, 5)], [ring(-180, -5, -175, 5)]],
};

const timeline: Timeline = { bucket: 'day', total: 1, buckets: [] };
const noFacets = { collection: [], processing_level: [], platform: [], instrument: [] };
/** Bodies of the POST searches, by path. */
type Body = Record<string, string>;
let posted: { search: Body[]; timeline: Body[]; facets: Body[] };
let gets: string[];

beforeEach(() => {
  posted = { search: [], timeline: [], facets: [] };
  gets = [];
  const record =
    (name: keyof typeof posted) =>
    async ({ request }: { request: Request }) => {
      posted[name].push((await request.json()) as Record<string, string>);
      return undefined;
    };
  const found: Granule = granule({ id: 7, bbox: [175, -5, -175, 5], footprint: FOOTPRINT });
  server.use(
    http.get('/api/v1/collections/', () => HttpResponse.json(page([collection()]))),
    http.get('/api/v1/granules/timeline/', () => HttpResponse.json(timeline)),
    http.get('/api/v1/granules/facets/', () => HttpResponse.json(noFacets)),
    http.get('/api/v1/granules/', () => {
      gets.push('/api/v1/granules/');
      return HttpResponse.json(page([]));
    }),
    http.post('/api/v1/granules/search/', async (info) => {
      await record('search')(info);
      const include = posted.search.at(-1)?.include;
      return HttpResponse.json({
        ...page([found]),
        ...(include ? { facets: noFacets, timeline } : {}),
      });
    }),
    http.post('/api/v1/granules/timeline/', async (info) => {
      await record('timeline')(info);
      return HttpResponse.json(timeline);
    }),
    http.post('/api/v1/granules/facets/', async (info) => {
      await record('facets')(info);
      return HttpResponse.json(noFacets);
    }),
  );
});

describe('searching by a shape', () => {
  it('a drawn polygon is POSTed as intersects, kept in the address, and survives a reload', async () => {
    const { router } = renderApp('/search?collection=MOD021KM.061');
    const map = await screen.findByRole('region', { name: /Map of the search/ }, { timeout: 5000 });
    await userEvent.click(
      within(map).getByRole('button', { name: 'draw a polygon on the test map' }),
    );

    await waitFor(() => expect(posted.search.length).toBeGreaterThan(0));
    const body = posted.search.at(-1)!;
    expect(body.collection).toBe('MOD021KM.061');
    expect(JSON.parse(body.intersects!)).toEqual(ACROSS);
    expect(body.bbox).toBeUndefined();
    // The facets and the timeline come in the same POST, not in two more.
    expect(body.include).toBe('facets,timeline');
    expect(posted.timeline).toEqual([]);
    expect(posted.facets).toEqual([]);

    // The results' footprints reach the map as their shapes, not their boxes.
    expect(await within(map).findByText('footprints drawn: MultiPolygon')).toBeInTheDocument();
    expect(
      screen.getByText(/Searching within a polygon cut at the antimeridian into 2 parts/),
    ).toBeInTheDocument();

    const address = new URLSearchParams(router.state.location.search);
    expect(JSON.parse(address.get('shape')!)).toEqual(ACROSS);

    // The same address opened again searches the same shape.
    posted.search = [];
    renderApp(`/search?${address.toString()}`);
    await waitFor(() => expect(posted.search.length).toBeGreaterThan(0));
    expect(JSON.parse(posted.search[0]!.intersects!)).toEqual(ACROSS);
  });

  it('clearing the shape searches everywhere again, with a plain GET', async () => {
    renderApp(`/search?shape=${encodeURIComponent(JSON.stringify(ACROSS))}`);
    await screen.findByText(/Searching within a polygon/);
    await userEvent.click(screen.getByRole('button', { name: 'Clear the shape' }));
    await waitFor(() => expect(gets).toContain('/api/v1/granules/'));
    expect(screen.getByText('map shape: none')).toBeInTheDocument();
  });

  it('an uploaded shape is searched, with the note saying how it was simplified', async () => {
    const reading: ShapeReading = {
      geometry: ACROSS,
      format: 'shapefile',
      features: 2,
      vertices: 4,
      simplified: true,
      note: 'Simplified from 3000 to 4 vertices.',
    };
    let uploaded = false;
    server.use(
      http.post('/api/v1/shapes/', async ({ request }) => {
        uploaded = (await request.formData()).has('file');
        return HttpResponse.json(reading);
      }),
    );
    renderApp('/search');
    const file = new File([new Uint8Array([80, 75, 3, 4])], 'area.zip', {
      type: 'application/zip',
    });
    await userEvent.upload(await screen.findByLabelText('Upload a shape'), file);

    expect(
      await screen.findByText(
        'Read 2 features from the shapefile file (4 vertices). Simplified from 3000 to 4 vertices.',
      ),
    ).toBeInTheDocument();
    expect(uploaded).toBe(true);
    await waitFor(() => expect(posted.search.length).toBeGreaterThan(0));
    expect(JSON.parse(posted.search.at(-1)!.intersects!)).toEqual(ACROSS);
  });

  it("the server's refusal of a file is shown and nothing is searched with it", async () => {
    server.use(
      http.post('/api/v1/shapes/', () =>
        HttpResponse.json(
          { detail: 'the zip has no .shx file: a shapefile needs .shp, .shx and .dbf' },
          { status: 400 },
        ),
      ),
    );
    renderApp('/search');
    const file = new File(['x'], 'area.zip', { type: 'application/zip' });
    await userEvent.upload(await screen.findByLabelText('Upload a shape'), file);
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The shape could not be read: the zip has no .shx file: a shapefile needs .shp, .shx and .dbf',
    );
    expect(posted.search).toEqual([]);
    expect(screen.getByText('map shape: none')).toBeInTheDocument();
  });
});
