import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import { renderApp } from '../../test/renderApp';
import { collection, page, server } from '../../test/server';
import type { Destination, DestinationBody } from './api/destinations';
import { asUser } from './fixtures';

const GRANARY_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBwkSZ5ECMKsOzmVXfg+3Z3oWfYdLfMNCDFjxWZhF0vf granary@archive.example.org';
const HOST_KEY = '[sftp.example.org]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEIvHjJyd6wBrgOznN1sPsB+7pFJtmQf0QuIcWTvvv+P';

function destination(overrides: Partial<Destination>): Destination {
  return {
    id: 3, name: 'feed', kind: 'folder', path: '', host: '', port: 22, username: '', host_key: '', host_key_fingerprint: '',
    folder: '/outbox/scientist/feed', created_at: '2026-11-01T00:00:00Z', ...overrides,
  };
}

let posted: DestinationBody[];
let keyRequests: number;

beforeEach(() => {
  asUser();
  posted = [];
  keyRequests = 0;
  const destinations = [destination({})];
  server.use(
    http.get('/api/v1/collections/', () => HttpResponse.json(page([collection()]))),
    http.post('/api/v1/subscriptions/preview/', () => HttpResponse.json({ count: 0, days: 30, since: '2026-10-23T10:00:00Z', sample: [] })),
    http.get('/api/v1/destinations/', () => HttpResponse.json(destinations)),
    http.get('/api/v1/destinations/sftp-key/', () => {
      keyRequests += 1;
      return HttpResponse.json({ public_key: GRANARY_KEY, fingerprint: 'SHA256:1oRxcEiCxvlxjBZ8M5jBdBAbZ21EyZQ5tRVKeZRYsPE' });
    }),
    http.post('/api/v1/destinations/', async ({ request }) => {
      const body = (await request.json()) as DestinationBody;
      posted.push(body);
      if (body.kind === 'sftp' && !body.host_key?.includes('ssh-ed25519')) {
        const message = 'A host key reads `<type> <base64>` with type one of ssh-ed25519, ecdsa-sha2-nistp256.';
        return HttpResponse.json({ detail: `host_key: ${message}`, errors: { host_key: [message] } }, { status: 400 });
      }
      const folder = body.kind === 'sftp' ? `sftp://${body.username}@${body.host}:${body.port}/~/${body.path}` : `/outbox/scientist/${body.name}`;
      const made = destination({ id: 4, ...body, port: body.port ?? 22, folder });
      destinations.push(made);
      return HttpResponse.json(made, { status: 201 });
    }),
  );
});

async function openPicker() {
  renderApp('/subscriptions/new');
  await userEvent.click(await screen.findByRole('radio', { name: 'Push into a destination (folder or SFTP)' }));
  return screen.findByLabelText('Destination');
}

describe('adding a destination', () => {
  it('adds an SFTP server with a pinned host key, showing the field the server refused', async () => {
    const user = userEvent.setup();
    const select = await openPicker();
    expect(screen.queryByLabelText('Host')).not.toBeInTheDocument();
    expect(keyRequests).toBe(0);

    await user.click(screen.getByRole('radio', { name: 'Your SFTP server' }));
    const key = await screen.findByRole('region', { name: "Granary's public key" });
    expect(within(key).getByText(GRANARY_KEY)).toBeInTheDocument();
    await user.click(within(key).getByRole('button', { name: 'Copy the key' }));
    expect(await within(key).findByRole('status')).toHaveTextContent('Copied.');
    expect(await navigator.clipboard.readText()).toBe(GRANARY_KEY);

    await user.type(screen.getByLabelText('New destination name'), 'home');
    await user.type(screen.getByLabelText('Host'), 'sftp.example.org');
    await user.clear(screen.getByLabelText('Port'));
    await user.type(screen.getByLabelText('Port'), '2222');
    await user.type(screen.getByLabelText('User'), 'scientist');
    await user.type(screen.getByLabelText('Remote folder'), 'incoming');
    await user.type(screen.getByLabelText('Server host key'), 'not a key');
    await user.click(screen.getByRole('button', { name: 'Add destination' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The destination was not added: see the marked fields.');
    expect(screen.getByLabelText('Server host key')).toHaveAccessibleDescription(/A host key reads `<type> <base64>`/);

    await user.clear(screen.getByLabelText('Server host key'));
    await user.click(screen.getByLabelText('Server host key'));
    await user.paste(HOST_KEY);
    await user.click(screen.getByRole('button', { name: 'Add destination' }));
    await waitFor(() => expect(select).toHaveValue('4'));
    expect(within(select).getByRole('option', { name: 'home (sftp://scientist@sftp.example.org:2222/~/incoming)' })).toBeInTheDocument();
    expect(posted.at(-1)).toEqual({
      name: 'home', kind: 'sftp', host: 'sftp.example.org', port: 2222, username: 'scientist', path: 'incoming', host_key: HOST_KEY,
    });
  });

  it('adds a folder with its name alone', async () => {
    const select = await openPicker();
    await userEvent.type(screen.getByLabelText('New destination name'), 'lab');
    await userEvent.click(screen.getByRole('button', { name: 'Add destination' }));
    await waitFor(() => expect(select).toHaveValue('4'));
    expect(within(select).getByRole('option', { name: 'lab (/outbox/scientist/lab)' })).toBeInTheDocument();
    expect(posted).toEqual([{ name: 'lab', kind: 'folder' }]);
    expect(keyRequests).toBe(0);
  });
});
