import { screen, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';

import type { GranuleDetail, StoredCopy, StoredFile } from '../../lib/api/types';
import { granule } from '../../test/granules';
import { renderApp } from '../../test/renderApp';
import { server } from '../../test/server';

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
      screen.getByText(/1 of 2 files are in the archive only \(tape or object store\)/),
    ).toBeInTheDocument();
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
