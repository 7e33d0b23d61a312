import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';

import type {
  AuditEvent,
  CollectionConfig,
  ProviderConfig,
  UserConfig,
  VolumeGroup,
} from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';

/** Typing key by key is slow on a busy machine; a paste is one event. */
async function fill(user: ReturnType<typeof userEvent.setup>, field: HTMLElement, text: string) {
  await user.clear(field);
  await user.click(field);
  await user.paste(text);
}
import { asOperator, asUser, page, server } from '../../test/server';

function group(name: string, silo: string, role = 'primary'): VolumeGroup {
  return {
    name,
    role,
    silo,
    volumes: 2,
    capacity_bytes: 1e9,
    used_bytes: 0,
    live_bytes: 0,
    percent_full: 0,
  };
}

function config(overrides: Partial<CollectionConfig> = {}): CollectionConfig {
  return {
    id: 3,
    key: 'SST.1',
    short_name: 'SST',
    version: '1',
    title: 'Sea surface temperature',
    description: '',
    access: 'public',
    duplicate_policy: 'error',
    file_patterns: ['^(?P<granule>SST\\d+)\\.nc$'],
    variables: [{ name: 'sst', units: 'K', long_name: 'sea surface temperature' }],
    extent_west: null,
    extent_south: null,
    extent_east: null,
    extent_north: null,
    extent_start: null,
    extent_end: null,
    cadence_seconds: 300,
    latency_target_seconds: 7200,
    approved_users: [],
    policy: { copies: ['primary', 'backup'], cache_residency_days: 2 },
    providers: ['MODAPS'],
    ...overrides,
  };
}

beforeEach(() => {
  asOperator();
  server.use(
    http.get('/api/v1/archive/volume-groups/', () =>
      HttpResponse.json([group('primary', 'silo1'), group('backup', 'silo2', 'backup')]),
    ),
    http.get('/api/v1/archive/buckets/', () =>
      HttpResponse.json([
        {
          name: 'archive-s3',
          medium: 'object',
          store: 'default',
          bucket: 'granary-archive',
          prefix: '',
          created_at: '2026-11-01T00:00:00Z',
        },
      ]),
    ),
    http.get('/api/v1/config/collections/', () => HttpResponse.json([config()])),
  );
});

describe('collections', () => {
  it('lists collections with their copies, cadence and providers', async () => {
    renderApp('/config');
    const row = (await screen.findByRole('link', { name: 'SST.1' }, { timeout: 5000 })).closest(
      'tr',
    )!;
    expect(row).toHaveTextContent('primary + backup');
    expect(row).toHaveTextContent('5 minutes');
    expect(row).toHaveTextContent('MODAPS');
  });

  it('creates a collection with its policy and sends durations in seconds', async () => {
    let sent: Record<string, unknown> | undefined;
    server.use(
      http.post('/api/v1/config/collections/', async ({ request }) => {
        sent = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json(config({ key: 'NEW.1' }), { status: 201 });
      }),
    );
    const user = userEvent.setup();
    renderApp('/config/collections/new');
    await fill(user, await screen.findByLabelText('Short name', {}, { timeout: 5000 }), 'NEW');
    await fill(user, screen.getByLabelText('Version'), '1');
    await fill(user, screen.getByLabelText('Title'), 'A new one');
    await fill(user, screen.getByLabelText(/^File patterns/), '^(?P<granule>N\\d+)\\.nc$');
    await user.selectOptions(screen.getByLabelText('Number of copies'), '2');
    await screen.findAllByRole('option', { name: 'object store: archive-s3' });
    const first = screen.getByLabelText('Copy 1 target');
    expect(within(first).getByRole('group', { name: 'Tape: volume groups' })).toHaveTextContent(
      'tape: primary (silo1)tape: backup (silo2)',
    );
    expect(within(first).getByRole('group', { name: 'Object store: buckets' })).toHaveTextContent(
      'object store: archive-s3',
    );
    await user.selectOptions(first, 'archive-s3');
    await user.selectOptions(screen.getByLabelText('Copy 2 target'), 'backup');
    await fill(user, screen.getByLabelText('One granule every'), '5');
    await fill(user, screen.getByLabelText('Archived within (after its end)'), '2');
    await user.click(screen.getByRole('button', { name: 'Create collection' }));
    expect(
      await screen.findByText('Collection NEW.1 created.', {}, { timeout: 5000 }),
    ).toBeInTheDocument();
    expect(sent).toMatchObject({
      short_name: 'NEW',
      version: '1',
      file_patterns: ['^(?P<granule>N\\d+)\\.nc$'],
      cadence_seconds: 300,
      latency_target_seconds: 7200,
      policy: { copies: ['archive-s3', 'backup'], cache_residency_days: 0 },
    });
  }, 20_000);

  it("shows the server's field errors on their fields, nested policy ones included", async () => {
    server.use(
      http.post('/api/v1/config/collections/', () =>
        HttpResponse.json(
          {
            detail: 'file_patterns: pattern 1 is not a regular expression',
            errors: {
              file_patterns: ['pattern 1 is not a regular expression: missing )'],
              policy: { copies: ['This list may not be empty.'] },
            },
          },
          { status: 400 },
        ),
      ),
    );
    const user = userEvent.setup();
    renderApp('/config/collections/new');
    await fill(user, await screen.findByLabelText(/^File patterns/, {}, { timeout: 5000 }), '(');
    await user.click(screen.getByRole('button', { name: 'Create collection' }));
    const patterns = screen.getByLabelText(/^File patterns/);
    await waitFor(() => expect(patterns).toHaveAttribute('aria-invalid', 'true'));
    expect(patterns).toHaveAccessibleDescription(/missing \)/);
    expect(screen.getByLabelText('Copy 1 target')).toHaveAccessibleDescription(
      'This list may not be empty.',
    );
  });

  it('loads a collection into the form and saves a change', async () => {
    let sent: Record<string, unknown> | undefined;
    server.use(
      http.get('/api/v1/config/collections/SST.1/', () => HttpResponse.json(config())),
      http.patch('/api/v1/config/collections/SST.1/', async ({ request }) => {
        sent = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json(config({ title: 'Renamed' }));
      }),
    );
    const user = userEvent.setup();
    renderApp('/config/collections/SST.1');
    const cadence = await screen.findByLabelText('One granule every', {}, { timeout: 5000 });
    await screen.findAllByRole('option', { name: 'tape: backup (silo2)' });
    expect(cadence).toHaveValue(5);
    expect(screen.getByLabelText('One granule every: unit')).toHaveValue('minutes');
    expect(screen.getByLabelText('Archived within (after its end): unit')).toHaveValue('hours');
    expect(screen.getByLabelText('Copy 2 target')).toHaveValue('backup');
    expect(screen.getByLabelText(/^Variables/)).toHaveValue('sst | K | sea surface temperature');
    await fill(user, screen.getByLabelText('Title'), 'Renamed');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Saved SST.1.', {}, { timeout: 5000 })).toBeInTheDocument();
    expect(sent).toMatchObject({
      title: 'Renamed',
      cadence_seconds: 300,
      variables: [{ name: 'sst', units: 'K', long_name: 'sea surface temperature' }],
    });
  });

  it('tells a scientist the pages are for operators', async () => {
    asUser();
    renderApp('/config');
    expect(await screen.findByText(/Configuration is for archive operators/)).toBeInTheDocument();
  });
});

describe('providers and users', () => {
  const modaps: ProviderConfig = {
    name: 'MODAPS',
    title: 'MODIS',
    contact_email: '',
    members: ['modaps'],
    collections: [],
    staging_area: '/data/staging/MODAPS',
    created_at: '2026-01-01T00:00:00Z',
  };

  it('gives a provider the right to deliver a collection', async () => {
    let sent: Record<string, unknown> | undefined;
    server.use(
      http.get('/api/v1/config/providers/MODAPS/', () => HttpResponse.json(modaps)),
      http.patch('/api/v1/config/providers/MODAPS/', async ({ request }) => {
        sent = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json({ ...modaps, collections: ['SST.1'] });
      }),
    );
    const user = userEvent.setup();
    renderApp('/config/providers/MODAPS');
    await user.click(await screen.findByRole('checkbox', { name: /SST\.1/ }));
    await user.click(screen.getByRole('button', { name: 'Save provider' }));
    expect(await screen.findByText('Saved MODAPS.')).toBeInTheDocument();
    expect(sent).toMatchObject({ collections: ['SST.1'], members: ['modaps'] });
  });

  it("changes a user's role and shows a refusal in the API's words", async () => {
    const alice: UserConfig = {
      id: 7,
      username: 'alice',
      email: '',
      role: 'user',
      active: true,
      providers: [],
      last_login: null,
    };
    const bodies: unknown[] = [];
    server.use(
      http.get('/api/v1/config/users/', () => HttpResponse.json([alice])),
      http.patch('/api/v1/config/users/7/', async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        bodies.push(body);
        if ('active' in body) {
          return HttpResponse.json({ detail: 'you cannot do that' }, { status: 409 });
        }
        return HttpResponse.json({ ...alice, role: 'operator' });
      }),
    );
    const user = userEvent.setup();
    renderApp('/config/users');
    await user.selectOptions(await screen.findByLabelText('Role of alice'), 'operator');
    expect(await screen.findByText('alice: operator, active.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Deactivate alice' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('alice: you cannot do that');
    expect(bodies).toEqual([{ role: 'operator' }, { active: false }]);
  });
});

describe('audit log and completeness', () => {
  it('lists changes with their before and after, and filters by who', async () => {
    const event: AuditEvent = {
      id: 1,
      at: '2026-03-14T10:00:00Z',
      actor: 'ops',
      action: 'update',
      target_type: 'collection',
      target_id: '3',
      target_label: 'SST.1',
      reason: 'new orbit',
      detail: { changes: { title: ['Old', 'New'], doi: [null, ''] } },
    };
    const asked: (string | null)[] = [];
    server.use(
      http.get('/api/v1/config/audit/', ({ request }) => {
        asked.push(new URL(request.url).searchParams.get('actor'));
        return HttpResponse.json(page([event]));
      }),
    );
    const user = userEvent.setup();
    renderApp('/config/audit');
    const row = (await screen.findByText('collection SST.1')).closest('tr')!;
    expect(within(row).getByText(/Old → New/)).toBeInTheDocument();
    expect(row).toHaveTextContent('new orbit');
    expect(row).not.toHaveTextContent('doi'); // empty before and after: nothing changed
    await fill(user, screen.getByLabelText('Who'), 'ops');
    await user.click(screen.getByRole('button', { name: 'Filter' }));
    await waitFor(() => expect(asked).toContain('ops'));
  });

  it('shows the day in figures, its gaps and its late granules', async () => {
    server.use(
      http.get('/api/v1/completeness/', ({ request }) => {
        const query = new URL(request.url).searchParams;
        expect([query.get('collection'), query.get('day')]).toEqual(['SST.1', '2026-03-14']);
        return HttpResponse.json({
          collection: 'SST.1',
          day: '2026-03-14',
          cadence_seconds: 300,
          latency_target_seconds: 7200,
          expected: 288,
          received: 285,
          missing: 3,
          granules: 285,
          gaps: [{ start: '2026-03-14T06:00:00Z', end: '2026-03-14T06:15:00Z', missing: 3 }],
          late_count: 1,
          late: [
            {
              granule_id: 'SST0042',
              temporal_end: '2026-03-14T03:30:00Z',
              archived_at: '2026-03-14T09:30:00Z',
              late_by_seconds: 14400,
            },
          ],
        });
      }),
      http.get('/api/v1/completeness/worst/', () =>
        HttpResponse.json({
          days: 7,
          since: '2026-03-08T00:00:00Z',
          collections: [
            {
              collection: 'SST.1',
              title: 'Sea surface temperature',
              expected: 2016,
              received: 2013,
              missing: 3,
              percent_received: 99.9,
              gaps: 1,
              late_count: 1,
            },
          ],
        }),
      ),
    );
    renderApp('/config/completeness?collection=SST.1&day=2026-03-14');
    const gap = (await screen.findByText('2026-03-14 06:00 UTC', {}, { timeout: 5000 })).closest(
      'tr',
    )!;
    const figure = (term: string) => screen.getByText(term, { selector: 'dt' }).nextSibling;
    expect(
      [figure('Expected'), figure('Received'), figure('Missing'), figure('Late')].map(
        (node) => node?.textContent,
      ),
    ).toEqual(['288', '285', '3', '1']);
    expect(gap).toHaveTextContent('2026-03-14 06:15 UTC');
    expect(gap).toHaveTextContent('3');
    const late = screen.getByText('SST0042').closest('tr')!;
    expect(late).toHaveTextContent('4 h');
    const worst = await screen.findByRole('table', { name: /Least complete collections/ });
    expect(within(worst).getByRole('link', { name: 'SST.1' })).toBeInTheDocument();
    expect(worst).toHaveTextContent('2,013 of 2,016');
  });
});
