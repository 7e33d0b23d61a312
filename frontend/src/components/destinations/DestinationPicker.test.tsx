import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import type { Destination, DestinationBody } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asUser, collection, page, server } from '../../test/server';

// The subscription form around the picker shows a map; Leaflet is not under test here.
vi.mock('../map/LazyBoxMap', () => ({
  LazyBoxMap: ({ label }: { label: string }) => <div role="region" aria-label={label} />,
}));

const GRANARY_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBwkSZ5ECMKsOzmVXfg+3Z3oWfYdLfMNCDFjxWZhF0vf granary@archive.example.org';
const HOST_KEY =
  '[sftp.example.org]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEIvHjJyd6wBrgOznN1sPsB+7pFJtmQf0QuIcWTvvv+P';

function destination(overrides: Partial<Destination>): Destination {
  return {
    id: 3,
    name: 'feed',
    kind: 'folder',
    path: '',
    host: '',
    port: 22,
    username: '',
    host_key: '',
    host_key_fingerprint: '',
    folder: '/outbox/scientist/feed',
    created_at: '2026-11-01T00:00:00Z',
    ...overrides,
  };
}

const PINNED = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEIvHjJyd6wBrgOznN1sPsB+7pFJtmQf0QuIcWTvvv+P';
const BAD_KEY =
  'A host key reads `<type> <base64>` with type one of ssh-ed25519, ecdsa-sha2-nistp256.';

function sftpFolder(body: Partial<Destination>) {
  return `sftp://${body.username}@${body.host}:${body.port}/~/${body.path}`;
}

let posted: DestinationBody[];
let patched: DestinationBody[];
let keyRequests: number;

beforeEach(() => {
  asUser();
  posted = [];
  patched = [];
  keyRequests = 0;
  const station = {
    id: 5,
    name: 'station',
    kind: 'sftp' as const,
    host: 'sftp.example.org',
    port: 22,
    username: 'scientist',
    path: 'in',
    host_key: PINNED,
  };
  const destinations = [destination({}), destination({ ...station, folder: sftpFolder(station) })];
  server.use(
    http.get('/api/v1/collections/', () => HttpResponse.json(page([collection()]))),
    http.post('/api/v1/subscriptions/preview/', () =>
      HttpResponse.json({ count: 0, days: 30, since: '2026-10-23T10:00:00Z', sample: [] }),
    ),
    http.get('/api/v1/destinations/', () => HttpResponse.json(destinations)),
    http.get('/api/v1/destinations/sftp-key/', () => {
      keyRequests += 1;
      return HttpResponse.json({
        public_key: GRANARY_KEY,
        fingerprint: 'SHA256:1oRxcEiCxvlxjBZ8M5jBdBAbZ21EyZQ5tRVKeZRYsPE',
      });
    }),
    http.post('/api/v1/destinations/', async ({ request }) => {
      const body = (await request.json()) as DestinationBody;
      posted.push(body);
      if (body.kind === 'sftp' && !body.host_key?.includes('ssh-ed25519')) {
        return HttpResponse.json(
          { detail: `host_key: ${BAD_KEY}`, errors: { host_key: [BAD_KEY] } },
          { status: 400 },
        );
      }
      const folder = body.kind === 'sftp' ? sftpFolder(body) : `/outbox/scientist/${body.name}`;
      const made = destination({ id: 4, ...body, port: body.port ?? 22, folder });
      destinations.push(made);
      return HttpResponse.json(made, { status: 201 });
    }),
    http.patch('/api/v1/destinations/:id/', async ({ params, request }) => {
      const body = (await request.json()) as DestinationBody;
      patched.push(body);
      if (body.kind === 'sftp' && !body.host_key?.includes('ssh-ed25519')) {
        return HttpResponse.json(
          { detail: `host_key: ${BAD_KEY}`, errors: { host_key: [BAD_KEY] } },
          { status: 400 },
        );
      }
      const index = destinations.findIndex((each) => String(each.id) === params.id);
      const changed = { ...destinations[index]!, ...body };
      destinations[index] = { ...changed, folder: sftpFolder(changed) };
      return HttpResponse.json(destinations[index]);
    }),
  );
});

async function openPicker() {
  renderApp('/subscriptions/new');
  await userEvent.click(
    await screen.findByRole('radio', { name: 'Push into a destination (folder or SFTP)' }),
  );
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
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The destination was not added: see the marked fields.',
    );
    expect(screen.getByLabelText('Server host key')).toHaveAccessibleDescription(
      /A host key reads `<type> <base64>`/,
    );

    await user.clear(screen.getByLabelText('Server host key'));
    await user.click(screen.getByLabelText('Server host key'));
    await user.paste(HOST_KEY);
    await user.click(screen.getByRole('button', { name: 'Add destination' }));
    await waitFor(() => expect(select).toHaveValue('4'));
    expect(
      within(select).getByRole('option', {
        name: 'home (sftp://scientist@sftp.example.org:2222/~/incoming)',
      }),
    ).toBeInTheDocument();
    expect(posted.at(-1)).toEqual({
      name: 'home',
      kind: 'sftp',
      host: 'sftp.example.org',
      port: 2222,
      username: 'scientist',
      path: 'incoming',
      host_key: HOST_KEY,
    });
  });

  it('adds a folder with its name alone', async () => {
    const select = await openPicker();
    await userEvent.type(screen.getByLabelText('New destination name'), 'lab');
    await userEvent.click(screen.getByRole('button', { name: 'Add destination' }));
    await waitFor(() => expect(select).toHaveValue('4'));
    expect(
      within(select).getByRole('option', { name: 'lab (/outbox/scientist/lab)' }),
    ).toBeInTheDocument();
    expect(posted).toEqual([{ name: 'lab', kind: 'folder' }]);
    expect(keyRequests).toBe(0);
  });

  it('changes the chosen destination, keeping what was not touched', async () => {
    const user = userEvent.setup();
    const select = await openPicker();
    expect(screen.queryByRole('button', { name: /^Change/ })).not.toBeInTheDocument();
    await user.selectOptions(select, '5');
    await user.click(screen.getByRole('button', { name: 'Change station' }));
    expect(screen.getByRole('group', { name: 'Change station' })).toBeInTheDocument();
    expect(screen.getByLabelText('Destination name')).toHaveValue('station');
    expect(screen.getByLabelText('Host')).toHaveValue('sftp.example.org');
    expect(screen.getByLabelText('Server host key')).toHaveValue(PINNED);

    await user.clear(screen.getByLabelText('Server host key'));
    await user.type(screen.getByLabelText('Server host key'), 'not a key');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The destination was not changed: see the marked fields.',
    );

    await user.clear(screen.getByLabelText('Server host key'));
    await user.click(screen.getByLabelText('Server host key'));
    await user.paste(PINNED);
    await user.clear(screen.getByLabelText('Port'));
    await user.type(screen.getByLabelText('Port'), '2222');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() =>
      expect(
        within(select).getByRole('option', {
          name: 'station (sftp://scientist@sftp.example.org:2222/~/in)',
        }),
      ).toBeInTheDocument(),
    );
    expect(select).toHaveValue('5');
    expect(patched.at(-1)).toEqual({
      name: 'station',
      kind: 'sftp',
      host: 'sftp.example.org',
      port: 2222,
      username: 'scientist',
      path: 'in',
      host_key: PINNED,
    });
    expect(posted).toEqual([]);
    expect(screen.getByRole('group', { name: 'Add a destination' })).toBeInTheDocument();
  });

  it('turns an SFTP destination into a folder of the outbox', async () => {
    const user = userEvent.setup();
    const select = await openPicker();
    await user.selectOptions(select, '5');
    await user.click(screen.getByRole('button', { name: 'Change station' }));
    await user.click(screen.getByRole('radio', { name: "Folder in Granary's outbox" }));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(patched).toEqual([{ name: 'station', kind: 'folder', path: '' }]));
  });

  it('cancels a change without sending it', async () => {
    const user = userEvent.setup();
    const select = await openPicker();
    await user.selectOptions(select, '5');
    await user.click(screen.getByRole('button', { name: 'Change station' }));
    await user.clear(screen.getByLabelText('Host'));
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByRole('group', { name: 'Add a destination' })).toBeInTheDocument();
    expect(screen.getByLabelText('New destination name')).toHaveValue('');
    expect(patched).toEqual([]);
  });
});
