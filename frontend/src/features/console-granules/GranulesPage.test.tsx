import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import { renderApp } from '../../test/renderApp';
import { asOperator, asUser, page, server } from '../../test/server';
import { consoleGranule } from './fixtures';

const COUNTS = {
  total: 12,
  states: {
    registered: 0,
    archiving: 1,
    archived: 8,
    failed: 2,
    superseded: 0,
    withdrawn: 1,
    deleted: 0,
  },
};

let asked: URLSearchParams[];
let counted: URLSearchParams[];

beforeEach(() => {
  asOperator();
  asked = [];
  counted = [];
  server.use(
    http.get('/api/v1/console/granules/', ({ request }) => {
      const params = new URL(request.url).searchParams;
      asked.push(params);
      if (params.get('created_from') === '2026-13-01')
        return HttpResponse.json(
          {
            detail: 'created_from: not a valid date',
            errors: { created_from: ['not a valid date'] },
          },
          { status: 400 },
        );
      const rows = [
        consoleGranule(),
        consoleGranule({ id: 8, granule_id: 'MOD09.A2026001.0005', state: 'failed' }),
      ];
      return HttpResponse.json(
        page(rows, { next: params.get('cursor') ? null : 'http://x/?cursor=abc' }),
      );
    }),
    http.get('/api/v1/console/granules/counts/', ({ request }) => {
      counted.push(new URL(request.url).searchParams);
      return HttpResponse.json(COUNTS);
    }),
  );
});

describe('operator: granules', () => {
  it('is in the dashboards’ navigation and lists granules with state chips', async () => {
    renderApp('/dashboards/granules');
    expect(await screen.findByRole('link', { name: 'Granules' })).toHaveAttribute(
      'aria-current',
      'page',
    );
    const row = await screen.findByRole('row', { name: /MOD09.A2026001.0000/ });
    expect(row).toHaveTextContent('archived');
    expect(row).toHaveTextContent('MODAPS');
    expect(within(row).getByRole('link', { name: 'MOD09.A2026001.0000' })).toHaveAttribute(
      'href',
      '/dashboards/granules/7',
    );
    const chips = screen.getByRole('group', { name: 'Granules per state' });
    expect(within(chips).getByRole('button', { name: 'all 12' })).toHaveAttribute(
      'aria-pressed',
      'true',
    );
    expect(within(chips).getByRole('button', { name: 'failed 2' })).toBeInTheDocument();
  });

  it('sends the filter, narrows by a chip and pages by cursor', async () => {
    const user = userEvent.setup();
    renderApp('/dashboards/granules');
    await screen.findByRole('row', { name: /MOD09.A2026001.0000/ });
    await user.type(screen.getByLabelText('Granule id'), 'mod09*.a2026?');
    await user.type(screen.getByLabelText('Provider'), 'MODAPS');
    await user.click(screen.getByRole('button', { name: 'Find granules' }));
    await waitFor(() => expect(asked.at(-1)?.get('granule_id')).toBe('mod09*.a2026?'));
    expect(asked.at(-1)?.get('provider')).toBe('MODAPS');
    expect(counted.at(-1)?.get('granule_id')).toBe('mod09*.a2026?');
    expect(counted.at(-1)?.has('state')).toBe(false);

    await user.click(screen.getByRole('button', { name: 'failed 2' }));
    await waitFor(() => expect(asked.at(-1)?.get('state')).toBe('failed'));
    expect(asked.at(-1)?.get('granule_id')).toBe('mod09*.a2026?');
    expect(screen.getByRole('button', { name: 'failed 2' })).toHaveAttribute(
      'aria-pressed',
      'true',
    );

    await user.click(screen.getByRole('button', { name: 'Older →' }));
    await waitFor(() => expect(asked.at(-1)?.get('cursor')).toBe('abc'));
    expect(asked.at(-1)?.get('state')).toBe('failed');
  });

  it('shows the API’s words under the field it refused', async () => {
    renderApp('/dashboards/granules?created_from=2026-13-01');
    expect(await screen.findByText('created_from: not a valid date')).toBeInTheDocument();
    expect(screen.getByLabelText('Ingested from')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByText('not a valid date')).toBeInTheDocument();
  });

  it('keeps scientists out', async () => {
    asUser();
    renderApp('/dashboards/granules');
    expect(await screen.findByText(/for archive operators/)).toBeInTheDocument();
    expect(asked).toHaveLength(0);
  });
});
