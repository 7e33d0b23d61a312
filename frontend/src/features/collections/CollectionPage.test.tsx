import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';

import type { BoxMapProps } from '../../components/map/types';
import type { CollectionDetail } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { server } from '../../test/server';

vi.mock('../../components/map/LazyBoxMap', () => ({
  LazyBoxMap: ({ label, box, boxStyle }: BoxMapProps) => (
    <div role="region" aria-label={label} data-box={box?.join(',')} data-style={boxStyle} />
  ),
}));

function detail(overrides: Partial<CollectionDetail> = {}): CollectionDetail {
  return {
    id: 1,
    key: 'MOD10C1.061',
    short_name: 'MOD10C1',
    version: '061',
    title: 'MODIS/Terra Snow Cover Daily L3 Global 0.05Deg CMG',
    description: 'Daily snow cover on a 0.05° climate modelling grid.',
    processing_level: '3',
    platform: 'Terra',
    instrument: 'MODIS',
    access: 'public',
    file_patterns: [],
    duplicate_policy: 'error',
    granule_count: 1234,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    doi: '10.5067/MODIS/MOD10C1.061',
    doi_url: 'https://doi.org/10.5067/MODIS/MOD10C1.061',
    citation: 'Hall, D. K. and G. A. Riggs. 2021. MODIS/Terra Snow Cover Daily L3. NSIDC.',
    variables: [
      { name: 'Day_CMG_Snow_Cover', units: 'percent', long_name: 'Daily snow extent' },
      { name: 'Snow_Spatial_QA', units: '', long_name: 'Quality of the snow cover' },
    ],
    spatial_extent: { bbox: [-180, -90, 180, 90], source: 'declared' },
    temporal_extent: { start: '2000-02-24T00:00:00Z', end: null, source: 'declared' },
    ...overrides,
  };
}

describe('CollectionPage', () => {
  it('shows what the collection is, how to cite it, its variables and its extent', async () => {
    server.use(http.get('/api/v1/collections/MOD10C1.061/', () => HttpResponse.json(detail())));
    renderApp('/collections/MOD10C1.061');

    expect(
      await screen.findByRole('heading', { name: /Snow Cover Daily L3 Global/ }),
    ).toBeInTheDocument();
    expect(screen.getByText(/Daily snow cover on a 0.05°/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: '10.5067/MODIS/MOD10C1.061' })).toHaveAttribute(
      'href',
      'https://doi.org/10.5067/MODIS/MOD10C1.061',
    );
    expect(screen.getByRole('link', { name: 'Search this collection' })).toHaveAttribute(
      'href',
      '/search?collection=MOD10C1.061',
    );
    expect(screen.getByText('1,234')).toBeInTheDocument();

    const variables = screen.getByRole('table', { name: 'Variables' });
    const rows = within(variables).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('Day_CMG_Snow_Cover');
    expect(rows[1]).toHaveTextContent('percent');
    expect(rows[2]).toHaveTextContent('Quality of the snow cover');

    expect(screen.getByText(/2000-02-24 00:00 UTC – ongoing/)).toBeInTheDocument();
    expect(screen.getAllByText('Declared by the data provider')).toHaveLength(2);
    // A global extent is drawn as an outline, never a map-wide fill.
    const map = screen.getByRole('region', { name: 'Area covered by MOD10C1.061' });
    expect(map).toHaveAttribute('data-box', '-180,-90,180,90');
    expect(map).toHaveAttribute('data-style', 'outline');
  });

  it('copies the citation', async () => {
    const user = userEvent.setup();
    server.use(http.get('/api/v1/collections/MOD10C1.061/', () => HttpResponse.json(detail())));
    renderApp('/collections/MOD10C1.061');

    await user.click(await screen.findByRole('button', { name: 'Copy citation' }));
    expect(await navigator.clipboard.readText()).toBe(detail().citation);
    expect(screen.getByText('Copied to the clipboard.')).toBeInTheDocument();
  });

  it('says an extent was computed from granules, and shows no map when there is none', async () => {
    server.use(
      http.get('/api/v1/collections/MOD10C1.061/', () =>
        HttpResponse.json(
          detail({
            doi: '',
            doi_url: null,
            variables: [],
            spatial_extent: { bbox: null, source: 'none' },
            temporal_extent: {
              start: '2026-11-01T00:00:00Z',
              end: '2026-11-02T00:00:00Z',
              source: 'granules',
            },
          }),
        ),
      ),
    );
    renderApp('/collections/MOD10C1.061');

    expect(await screen.findByText('No DOI registered')).toBeInTheDocument();
    expect(screen.getByText('No variables listed')).toBeInTheDocument();
    expect(screen.getByText('Computed from the archived granules')).toBeInTheDocument();
    expect(screen.getByText(/none declared and no granule archived/)).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: /Area covered/ })).not.toBeInTheDocument();
  });

  it('says a missing collection is missing, without a retry that cannot help', async () => {
    server.use(
      http.get('/api/v1/collections/NOPE.001/', () =>
        HttpResponse.json({ detail: 'No such collection.' }, { status: 404 }),
      ),
    );
    renderApp('/collections/NOPE.001');

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('No such collection.');
    expect(alert).toHaveTextContent('Check the address');
    expect(within(alert).queryByRole('button', { name: 'Try again' })).not.toBeInTheDocument();
  });

  it('is linked from the collections list', async () => {
    server.use(
      http.get('/api/v1/collections/', () =>
        HttpResponse.json({ next: null, previous: null, results: [detail()] }),
      ),
    );
    renderApp('/');
    expect(await screen.findByRole('link', { name: 'MOD10C1.061' })).toHaveAttribute(
      'href',
      '/collections/MOD10C1.061',
    );
  });
});
