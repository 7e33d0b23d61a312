import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';

import type { ApiToken } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { operator, server } from '../../test/server';

const made: ApiToken = {
  id: 7,
  name: 'laptop',
  scopes: ['read', 'order'],
  prefix: 'gra_AbCd',
  created_at: '2026-11-29T06:00:00Z',
  expires_at: '2027-02-27T06:00:00Z',
  revoked_at: null,
  last_used_at: null,
  active: true,
};

describe('API tokens page', () => {
  it('makes a scoped token, shows it once, lists it and revokes it', async () => {
    let tokens: ApiToken[] = [];
    let sent: unknown;
    server.use(
      http.get('/api/v1/me/', () => HttpResponse.json(operator)),
      http.get('/api/v1/auth/tokens/', () => HttpResponse.json(tokens)),
      http.post('/api/v1/auth/tokens/', async ({ request }) => {
        sent = await request.json();
        tokens = [made];
        return HttpResponse.json({ ...made, token: 'gra_AbCdEfSecret' }, { status: 201 });
      }),
      http.delete('/api/v1/auth/tokens/7/', () => {
        tokens = [{ ...made, revoked_at: '2026-11-29T07:00:00Z', active: false }];
        return HttpResponse.json(tokens[0]);
      }),
    );
    renderApp('/tokens');
    expect(await screen.findByText('You have no API tokens.')).toBeInTheDocument();

    await userEvent.type(screen.getByLabelText('Name'), 'laptop');
    await userEvent.click(screen.getByRole('checkbox', { name: /^order/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Make token' }));

    expect(await screen.findByTestId('new-token')).toHaveTextContent('gra_AbCdEfSecret');
    expect(sent).toEqual({ name: 'laptop', scopes: ['read', 'order'], days: 90 });
    const row = await screen.findByRole('row', { name: /laptop/ });
    expect(within(row).getByText('read, order')).toBeInTheDocument();

    await userEvent.click(within(row).getByRole('button', { name: 'Revoke laptop' }));
    expect(
      await within(await screen.findByRole('row', { name: /laptop/ })).findByText(/revoked/),
    ).toBeInTheDocument();
  });
});
