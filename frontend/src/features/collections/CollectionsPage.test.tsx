import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';

import { renderApp } from '../../test/renderApp';
import { collection, page, server } from '../../test/server';

const modis = collection();
const snow = collection({
  id: 2,
  short_name: 'MOD10C1',
  title: 'MODIS/Terra Snow Cover Daily L3 Global 0.05Deg CMG',
  processing_level: '3',
  access: 'restricted',
  granule_count: 1234,
});

describe('CollectionsPage', () => {
  it('lists collections from the API', async () => {
    server.use(http.get('/api/v1/collections/', () => HttpResponse.json(page([modis, snow]))));
    renderApp('/');

    expect(screen.getByRole('status')).toHaveTextContent('Loading collections');
    const table = await screen.findByRole('table');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);

    const [first, second] = rows as [HTMLElement, HTMLElement];
    expect(within(first).getByRole('rowheader')).toHaveTextContent('MOD021KM.061');
    expect(first).toHaveTextContent('MODIS/Terra Calibrated Radiances 5-Min L1B Swath 1km');
    expect(first).toHaveTextContent('1B');
    expect(first).toHaveTextContent('Terra / MODIS');
    expect(first).toHaveTextContent('Public');
    expect(first).toHaveTextContent('12');

    expect(within(second).getByRole('rowheader')).toHaveTextContent('MOD10C1.061');
    expect(second).toHaveTextContent('Restricted');
    expect(second).toHaveTextContent('1,234');
    expect(screen.getByText('Showing 2 collections')).toBeInTheDocument();
  });

  it('shows the API error detail on a 500', async () => {
    server.use(
      http.get('/api/v1/collections/', () =>
        HttpResponse.json({ detail: 'The catalog database is unavailable.' }, { status: 500 }),
      ),
    );
    renderApp('/');

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load collections');
    expect(alert).toHaveTextContent('The catalog database is unavailable.');
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });

  it('shows the API error detail on a 400 and offers no retry, since it would fail the same', async () => {
    server.use(
      http.get('/api/v1/collections/', () =>
        HttpResponse.json(
          {
            detail: 'bbox: bbox south (10) is north of its north (5)',
            errors: { bbox: ['bbox south (10) is north of its north (5)'] },
          },
          { status: 400 },
        ),
      ),
    );
    renderApp('/');

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('bbox: bbox south (10) is north of its north (5)');
    expect(within(alert).queryByRole('button', { name: 'Try again' })).not.toBeInTheDocument();
  });

  it('offers a retry when the archive is busy (429) and the retry can succeed', async () => {
    let calls = 0;
    server.use(
      http.get('/api/v1/collections/', () => {
        calls += 1;
        if (calls === 1) {
          return HttpResponse.json({ detail: 'Too many requests.' }, { status: 429 });
        }
        return HttpResponse.json(page([modis]));
      }),
    );
    renderApp('/');

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('wait a minute');
    await userEvent.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('link', { name: 'MOD021KM.061' })).toBeInTheDocument();
  });

  it('explains a server error that is not JSON', async () => {
    server.use(
      http.get(
        '/api/v1/collections/',
        () => new HttpResponse('<h1>Bad Gateway</h1>', { status: 502, statusText: 'Bad Gateway' }),
      ),
    );
    renderApp('/');

    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The server answered 502 Bad Gateway.',
    );
  });

  it('shows the empty state when there are no collections', async () => {
    renderApp('/');

    expect(await screen.findByText('No collections yet')).toBeInTheDocument();
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });

  it('passes the filter text to the API as ?q=', async () => {
    const asked: string[] = [];
    server.use(
      http.get('/api/v1/collections/', ({ request }) => {
        const q = new URL(request.url).searchParams.get('q') ?? '';
        asked.push(q);
        return HttpResponse.json(page(q === 'snow' ? [snow] : [modis, snow]));
      }),
    );
    const { router } = renderApp('/');
    await screen.findByText('MOD021KM.061');

    await userEvent.type(screen.getByRole('searchbox', { name: 'Filter collections' }), 'snow');

    await waitFor(() => expect(screen.queryByText('MOD021KM.061')).not.toBeInTheDocument());
    expect(screen.getByText('MOD10C1.061')).toBeInTheDocument();
    expect(screen.getByText('Showing 1 collection matching “snow”')).toBeInTheDocument();
    expect(asked.at(-1)).toBe('snow');
    expect(router.state.location.search).toBe('?q=snow');
  });

  it('reads the filter from the address and says when nothing matches', async () => {
    server.use(
      http.get('/api/v1/collections/', ({ request }) => {
        expect(new URL(request.url).searchParams.get('q')).toBe('landsat');
        return HttpResponse.json(page([]));
      }),
    );
    renderApp('/?q=landsat');

    expect(await screen.findByText('No collections match “landsat”')).toBeInTheDocument();
    expect(screen.getByRole('searchbox', { name: 'Filter collections' })).toHaveValue('landsat');
  });

  it('follows the cursor of the next page', async () => {
    server.use(
      http.get('/api/v1/collections/', ({ request }) => {
        const cursor = new URL(request.url).searchParams.get('cursor');
        return cursor === 'abc'
          ? HttpResponse.json(page([snow], { previous: 'http://testserver/api/v1/collections/' }))
          : HttpResponse.json(
              page([modis], { next: 'http://testserver/api/v1/collections/?cursor=abc' }),
            );
      }),
    );
    const { router } = renderApp('/');

    await userEvent.click(await screen.findByRole('link', { name: /Next/ }));
    expect(await screen.findByText('MOD10C1.061')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?cursor=abc');

    await userEvent.click(screen.getByRole('link', { name: /Previous/ }));
    expect(await screen.findByText('MOD021KM.061')).toBeInTheDocument();
    expect(router.state.location.search).toBe('');
  });
});
