import { screen } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';

import { renderApp } from '../../test/renderApp';
import { anonymous, server } from '../../test/server';

describe('header', () => {
  it('offers a login link to anonymous visitors', async () => {
    renderApp('/');

    const login = await screen.findByRole('link', { name: 'Log in' });
    expect(login).toHaveAttribute('href', '/login');
    expect(screen.getByRole('link', { name: 'Granary' })).toHaveAttribute('href', '/');
  });

  it('shows the signed-in user name and role', async () => {
    server.use(
      http.get('/api/v1/me/', () =>
        HttpResponse.json({
          ...anonymous,
          authenticated: true,
          username: 'ada',
          email: 'ada@example.org',
          role: 'operator',
          roles: ['operator', 'user'],
        }),
      ),
    );
    renderApp('/');

    expect(await screen.findByText('ada')).toBeInTheDocument();
    expect(screen.getByText('operator')).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Log in' })).not.toBeInTheDocument();
  });

  it('shows a not-found page for unknown paths', async () => {
    renderApp('/no/such/page');

    expect(await screen.findByRole('heading', { name: 'Page not found' })).toBeInTheDocument();
  });
});
