import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';

import { renderApp } from '../../test/renderApp';
import { anonymous, emptyCart, operator, server } from '../../test/server';

describe('login page', () => {
  it('logs in, sends the CSRF token and goes back to where the user was', async () => {
    document.cookie = 'csrftoken=tok123; path=/';
    let sent: { body: unknown; csrf: string | null } | undefined;
    server.use(
      http.post('/api/v1/auth/login/', async ({ request }) => {
        sent = { body: await request.json(), csrf: request.headers.get('X-CSRFToken') };
        return HttpResponse.json(operator);
      }),
      http.get('/api/v1/metrics/today/', () =>
        HttpResponse.json({ detail: 'later' }, { status: 500 }),
      ),
      http.get('/api/v1/metrics/daily/', () =>
        HttpResponse.json({ detail: 'later' }, { status: 500 }),
      ),
      http.get('/api/v1/metrics/throughput/', () =>
        HttpResponse.json({ detail: 'later' }, { status: 500 }),
      ),
      http.get('/api/v1/metrics/targets/', () => HttpResponse.json({ ingest: 1, distribution: 2 })),
    );
    const { router } = renderApp('/login?next=/dashboards');

    await userEvent.type(screen.getByLabelText('User name'), 'ops');
    await userEvent.type(screen.getByLabelText('Password'), 'secret');
    await userEvent.click(screen.getByRole('button', { name: 'Log in' }));

    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboards'));
    expect(sent).toEqual({ body: { username: 'ops', password: 'secret' }, csrf: 'tok123' });
    expect(await screen.findByText('ops')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Dashboards' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Log out' })).toBeInTheDocument();
  });

  it('stays logged in when the visitor’s /me/ answers after the login (regression)', async () => {
    // The e2e journeys saw it on a busy server: /me/ asked at page load came back anonymous
    // after the login had set the user, and the app showed "Log in" again.
    let answerMe: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answerMe = resolve;
    });
    server.use(
      http.get('/api/v1/me/', async () => {
        await answered;
        return HttpResponse.json(anonymous);
      }),
      http.post('/api/v1/auth/login/', () => HttpResponse.json(operator)),
    );
    const { router } = renderApp('/login?next=/orders');

    await userEvent.type(screen.getByLabelText('User name'), 'ops');
    await userEvent.type(screen.getByLabelText('Password'), 'secret');
    await userEvent.click(screen.getByRole('button', { name: 'Log in' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/orders'));
    expect(await screen.findByRole('button', { name: 'Log out' })).toBeInTheDocument();

    answerMe();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.getByRole('button', { name: 'Log out' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Log in' })).not.toBeInTheDocument();
  });

  it('shows the API’s words when the login is refused', async () => {
    server.use(
      http.post('/api/v1/auth/login/', () =>
        HttpResponse.json(
          { detail: 'Wrong user name or password.' },
          { status: 401, headers: { 'WWW-Authenticate': 'Token' } },
        ),
      ),
    );
    const { router } = renderApp('/login');

    await userEvent.type(screen.getByLabelText('User name'), 'ops');
    await userEvent.type(screen.getByLabelText('Password'), 'nope');
    await userEvent.keyboard('{Enter}');

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Wrong user name or password.');
    expect(alert).toHaveFocus();
    expect(router.state.location.pathname).toBe('/login');
  });

  it('never follows a next= that leaves the site', async () => {
    server.use(http.post('/api/v1/auth/login/', () => HttpResponse.json(operator)));
    const { router } = renderApp('/login?next=//evil.example/');

    await userEvent.type(screen.getByLabelText('User name'), 'ops');
    await userEvent.type(screen.getByLabelText('Password'), 'x');
    await userEvent.click(screen.getByRole('button', { name: 'Log in' }));

    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
  });

  it('logs out from the header', async () => {
    let loggedOut = false;
    server.use(
      http.get('/api/v1/me/', () => HttpResponse.json(loggedOut ? anonymous : operator)),
      http.post('/api/v1/auth/logout/', () => {
        loggedOut = true;
        return new HttpResponse(null, { status: 204 });
      }),
    );
    renderApp('/');

    await userEvent.click(await screen.findByRole('button', { name: 'Log out' }));

    expect(await screen.findByRole('link', { name: 'Log in' })).toBeInTheDocument();
    expect(loggedOut).toBe(true);
    expect(screen.queryByRole('link', { name: 'Dashboards' })).not.toBeInTheDocument();
  });

  it('asks for no cart once the session has ended (regression)', async () => {
    // The header's cart was asked again by the logout's refresh before the header had seen
    // the anonymous visitor: a 401 in the console whenever it answered before it was dropped.
    let loggedOut = false;
    const cartAfterLogout: string[] = [];
    server.use(
      http.get('/api/v1/me/', () => HttpResponse.json(loggedOut ? anonymous : operator)),
      http.get('/api/v1/cart/', ({ request }) => {
        if (!loggedOut) return HttpResponse.json(emptyCart);
        cartAfterLogout.push(request.url);
        return HttpResponse.json({ detail: 'not logged in' }, { status: 401 });
      }),
      http.post('/api/v1/auth/logout/', () => {
        loggedOut = true;
        return new HttpResponse(null, { status: 204 });
      }),
    );
    renderApp('/');
    await screen.findByRole('link', { name: 'Cart' });

    await userEvent.click(screen.getByRole('button', { name: 'Log out' }));
    await screen.findByRole('link', { name: 'Log in' });
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(cartAfterLogout).toEqual([]);
    expect(screen.queryByRole('link', { name: 'Cart' })).not.toBeInTheDocument();
  });

  it('keeps the dashboards from anonymous visitors with a way to log in', async () => {
    renderApp('/dashboards/archive');

    expect(await screen.findByText(/The dashboards are for archive operators/)).toBeInTheDocument();
    // Both the header and the page offer a login that comes back here.
    const links = screen.getAllByRole('link', { name: 'Log in' });
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      '/login?next=%2Fdashboards%2Farchive',
      '/login?next=%2Fdashboards%2Farchive',
    ]);
  });

  it('offers single sign-on when a provider is configured, keeping where the user was', async () => {
    server.use(
      http.get('/api/v1/auth/methods/', () =>
        HttpResponse.json({
          local: true,
          oidc: { name: 'Campus IdP', login_url: '/api/v1/auth/oidc/login/' },
        }),
      ),
    );
    renderApp('/login?next=/orders');
    const link = await screen.findByRole('link', { name: 'Sign in with Campus IdP' });
    expect(link).toHaveAttribute('href', '/api/v1/auth/oidc/login/?next=%2Forders');
    expect(screen.getByLabelText('User name')).toBeInTheDocument();
  });

  it('shows no single sign-on without a provider', async () => {
    renderApp('/login');
    await screen.findByLabelText('User name');
    expect(screen.queryByRole('link', { name: /Sign in with/ })).not.toBeInTheDocument();
  });
});
