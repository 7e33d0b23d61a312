import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';

import type { GranuleDetail, StoredCopy, StoredFile } from '../../lib/api/types';
import { granule } from '../../test/granules';
import { renderApp } from '../../test/renderApp';
import { asUser, server } from '../../test/server';

vi.mock('../../components/map/LazyBoxMap', () => ({
  LazyBoxMap: ({ label }: { label: string }) => <div role="region" aria-label={label} />,
}));

function tapeCopy(copyNumber: number, volume: string, silo: string): StoredCopy {
  return {
    copy_number: copyNumber,
    segment: 0,
    medium: 'tape',
    state: 'verified',
    length: 1_500_000,
    volume,
    silo,
    bucket: null,
    key: null,
    offset: null,
  };
}

function detail(overrides: Partial<GranuleDetail> = {}): GranuleDetail {
  const base = granule({
    id: 5,
    collection: 'MOD10C1.061',
    granule_id: 'MOD10C1.A2026305.061',
    residency: 'tape',
  });
  return {
    ...base,
    files: [
      {
        id: 50,
        name: 'MOD10C1.A2026305.061.hdf',
        role: 'data',
        size: 1_500_000,
        checksum_type: 'MD5',
        checksum: '0cc175b9c0f1b6a831c399e269772661',
        in_cache: false,
        copies: [tapeCopy(1, 'A00001', 'silo1'), tapeCopy(2, 'B00001', 'silo2')],
        download_url: null,
      },
      {
        id: 51,
        name: 'MOD10C1.A2026305.061.png',
        role: 'browse',
        size: 3035,
        checksum_type: 'MD5',
        checksum: '92eb5ffee6ae2fec3ad71c777531578f',
        in_cache: true,
        copies: [],
        download_url: '/api/v1/files/51/download',
      },
    ],
    browse_url: '/api/v1/files/51/download',
    ...overrides,
  };
}

describe('GranulePage', () => {
  it('shows metadata, files with sizes and checksums, the browse image and where the data lives', async () => {
    server.use(http.get('/api/v1/granules/5/', () => HttpResponse.json(detail())));
    renderApp('/granules/5');

    expect(
      await screen.findByRole('heading', { name: 'MOD10C1.A2026305.061' }),
    ).toBeInTheDocument();
    expect(screen.getByText('On tape')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'MOD10C1.061' })).toHaveAttribute(
      'href',
      '/collections/MOD10C1.061',
    );
    expect(screen.getByText('2026-11-01 00:05 UTC')).toBeInTheDocument();
    expect(screen.getByText('-10, 20, 15, 40')).toBeInTheDocument();
    expect(screen.getByText('cloud_cover').closest('div')).toHaveTextContent('cloud_cover12');
    expect(
      screen.getByRole('img', { name: 'Browse image of MOD10C1.A2026305.061' }),
    ).toHaveAttribute('src', '/api/v1/files/51/download');
    expect(screen.getByText(/1 of 2 files are on tape only/)).toBeInTheDocument();

    const [data, browse] = within(screen.getByRole('table')).getAllByRole('row').slice(1) as [
      HTMLElement,
      HTMLElement,
    ];
    expect(data).toHaveTextContent('1.50 MB');
    expect(data).toHaveTextContent('MD5 0cc175b9c0f1b6a831c399e269772661');
    expect(data).toHaveTextContent('Not in cache');
    expect(data).toHaveTextContent('Copy 1: tape · A00001 in silo1');
    expect(data).toHaveTextContent('Copy 2: tape · B00001 in silo2');
    expect(browse).toHaveTextContent('Browse image');
    expect(browse).toHaveTextContent('In cache');
    expect(screen.getByRole('link', { name: 'Log in to order' })).toHaveAttribute(
      'href',
      '/login?next=%2Fgranules%2F5',
    );
  });

  it('names the bucket and key of a copy in the object store', async () => {
    const base = detail();
    const [data, browse] = base.files as [StoredFile, StoredFile];
    const key = 'MOD10C1.061/MOD10C1.A2026305.061/MOD10C1.A2026305.061.hdf';
    server.use(
      http.get('/api/v1/granules/5/', () =>
        HttpResponse.json({
          ...base,
          files: [
            {
              ...data,
              download_url: '/api/v1/files/50/download',
              copies: [
                {
                  ...tapeCopy(1, '', ''),
                  medium: 'object',
                  volume: null,
                  silo: null,
                  bucket: 'archive-s3',
                  key,
                  offset: 0,
                },
                {
                  ...tapeCopy(3, '', ''),
                  medium: 'object',
                  volume: null,
                  silo: null,
                  bucket: 'archive-s3',
                  key: 'packs/2026/11/28/r7-0a1b2c3d.tar',
                  offset: 1536,
                },
                { ...tapeCopy(2, 'B00001', 'silo2'), state: 'bad' },
              ],
            },
            browse,
          ],
        }),
      ),
    );
    renderApp('/granules/5');

    const row = (await screen.findAllByRole('row'))[1] as HTMLElement;
    expect(row).toHaveTextContent(`Copy 1: object store · bucket archive-s3, key ${key}`);
    expect(row).not.toHaveTextContent(`${key} from byte`);
    expect(row).toHaveTextContent(
      'Copy 3: object store · bucket archive-s3, key packs/2026/11/28/r7-0a1b2c3d.tar from byte 1,536',
    );
    expect(row).toHaveTextContent('Copy 2: tape · B00001 in silo2 (bad)');
    expect(
      screen.getByText(/Every file is in the disk cache or the object store/),
    ).toBeInTheDocument();
  });

  it('offers a download for each file that needs no recall, and an order for the rest', async () => {
    asUser();
    server.use(http.get('/api/v1/granules/5/', () => HttpResponse.json(detail())));
    renderApp('/granules/5');
    const rows = (await screen.findAllByRole('row')).slice(1) as [HTMLElement, HTMLElement];
    expect(within(rows[0]).queryByRole('link', { name: /Download/ })).not.toBeInTheDocument();
    expect(rows[0]).toHaveTextContent('Order it: on tape only');
    expect(
      within(rows[1]).getByRole('link', { name: 'Download MOD10C1.A2026305.061.png' }),
    ).toHaveAttribute('href', '/api/v1/files/51/download');
  });

  it('shows a list of variables as a table, not JSON', async () => {
    const variables = [
      { name: 'analysed_sst', shape: [1, 180, 360], units: 'kelvin', long_name: 'SST' },
      { name: 'mask', shape: [180, 360], long_name: 'land mask', flag_values: [1, 2] },
    ];
    server.use(
      http.get('/api/v1/granules/5/', () =>
        HttpResponse.json(detail({ attributes: { cloud_cover: 12, variables } })),
      ),
    );
    renderApp('/granules/5');
    const table = await screen.findByRole('table', { name: 'Variables of the granule' });
    const [head, sst, mask] = within(table).getAllByRole('row') as [
      HTMLElement,
      HTMLElement,
      HTMLElement,
    ];
    expect(head).toHaveTextContent('NameLong nameUnitsShapeFlag values');
    expect(sst).toHaveTextContent('analysed_sstSSTkelvin1 × 180 × 360');
    expect(mask).toHaveTextContent('maskland mask180 × 3601 × 2');
    expect(screen.queryByText(/\{"name"/)).not.toBeInTheDocument();
  });

  it('says a withdrawn granule was withdrawn, when and why', async () => {
    server.use(
      http.get('/api/v1/granules/9/', () =>
        HttpResponse.json(
          {
            detail: 'MOD10C1.061:X was withdrawn by an operator: bad calibration',
            state: 'withdrawn',
            retired_at: '2026-11-20T08:30:00Z',
          },
          { status: 410 },
        ),
      ),
    );
    renderApp('/granules/9');
    expect(
      await screen.findByRole('heading', { name: 'Granule 9 was withdrawn' }),
    ).toBeInTheDocument();
    const alert = screen.getByRole('alert');
    expect(alert).toHaveTextContent('Withdrawn on 2026-11-20 08:30 UTC');
    expect(alert).toHaveTextContent('bad calibration');
  });

  it('says why a granule cannot be shown', async () => {
    server.use(
      http.get('/api/v1/granules/9/', () =>
        HttpResponse.json({ detail: 'No Granule matches the given query.' }, { status: 404 }),
      ),
    );
    renderApp('/granules/9');
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'No Granule matches the given query.',
    );
  });
});
