import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import type { SubscriptionBody, SubscriptionFilter } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { anonymous, asUser, collection, page, scientist, server } from '../../test/server';
import { subscription } from './fixtures';

vi.mock('../../components/map/LazyBoxMap', () => ({
  LazyBoxMap: ({ label }: { label: string }) => <div role="region" aria-label={label} />,
}));

const modis = collection();
const snow = collection({
  id: 2,
  short_name: 'MOD10C1',
  title: 'MODIS/Terra Snow Cover Daily L3 Global 0.05Deg CMG',
});

let previews: (SubscriptionFilter & { days: number })[];

beforeEach(() => {
  asUser();
  previews = [];
  server.use(
    http.get('/api/v1/collections/', () => HttpResponse.json(page([modis, snow]))),
    http.post('/api/v1/subscriptions/preview/', async ({ request }) => {
      const body = (await request.json()) as SubscriptionFilter & { days: number };
      previews.push(body);
      return HttpResponse.json({
        count: body.bbox ? 12 : 340,
        days: body.days,
        since: '2026-10-23T10:00:00Z',
        sample: [
          {
            id: 1,
            collection: 'MOD021KM.061',
            granule_id: 'MOD021KM.A2026325.1005.061.2026326101512',
            temporal_start: '2026-11-21T10:05:00Z',
            temporal_end: '2026-11-21T10:10:00Z',
            archived_at: '2026-11-21T11:00:00Z',
          },
        ],
      });
    }),
  );
});

function previewCount() {
  return within(screen.getByRole('complementary', { name: 'Preview' })).getByRole('status');
}

async function chooseModis() {
  await userEvent.click(await screen.findByRole('checkbox', { name: /MOD021KM\.061/ }));
}

describe('subscription form', () => {
  it('previews how many granules of the last 30 days the filter matches, as the filter changes', async () => {
    renderApp('/subscriptions/new');
    expect(await screen.findByRole('heading', { name: 'New subscription' })).toBeInTheDocument();
    expect(
      screen.getByText('Choose a collection to see how many recent granules match.'),
    ).toBeInTheDocument();

    await chooseModis();
    const count = previewCount();
    await waitFor(() => expect(count).toHaveTextContent('340 granules of the last 30 days match.'));
    expect(previews.at(-1)).toEqual({
      collections: ['MOD021KM.061'],
      bbox: null,
      start: null,
      end: null,
      conditions: [],
      new_versions: false,
      days: 30,
    });

    const area = screen.getByRole('group', { name: 'Area (optional)' });
    await userEvent.type(within(area).getByLabelText('West'), '-125');
    await userEvent.type(within(area).getByLabelText('South'), '32');
    await userEvent.type(within(area).getByLabelText('East'), '-114');
    await userEvent.type(within(area).getByLabelText('North'), '42');
    await userEvent.type(screen.getByLabelText('From'), '2026-11-01');
    await userEvent.type(screen.getByLabelText('To'), '2026-11-30');
    await userEvent.selectOptions(screen.getByLabelText('Day or night'), 'Day only');
    await userEvent.type(screen.getByLabelText('Cloud cover below (%)'), '20');

    await waitFor(() => expect(count).toHaveTextContent('12 granules of the last 30 days match.'));
    await waitFor(() =>
      expect(previews.at(-1)).toEqual({
        collections: ['MOD021KM.061'],
        bbox: [-125, 32, -114, 42],
        start: '2026-11-01',
        end: '2026-11-30',
        conditions: [
          { name: 'day_night', op: 'eq', value: 'Day' },
          { name: 'cloud_cover', op: 'lt', value: 20 },
        ],
        new_versions: false,
        days: 30,
      }),
    );
    expect(screen.getByText('MOD021KM.A2026325.1005.061.2026326101512')).toBeInTheDocument();
    // Typing is debounced: far fewer previews than keystrokes.
    expect(previews.length).toBeLessThan(8);
  });

  it('shows what the API says is wrong with the filter in the preview, then in the form on submit', async () => {
    server.use(
      http.post('/api/v1/subscriptions/preview/', () =>
        HttpResponse.json(
          {
            detail: 'bbox: south (50) is north of north (40)',
            errors: { bbox: ['south (50) is north of north (40)'] },
          },
          { status: 400 },
        ),
      ),
      http.post('/api/v1/subscriptions/', () =>
        HttpResponse.json(
          {
            detail: 'name: This field may not be blank.; bbox: south (50) is north of north (40)',
            errors: {
              name: ['This field may not be blank.'],
              bbox: ['south (50) is north of north (40)'],
            },
          },
          { status: 400 },
        ),
      ),
    );
    renderApp('/subscriptions/new');
    await chooseModis();
    const area = screen.getByRole('group', { name: 'Area (optional)' });
    await userEvent.type(within(area).getByLabelText('South'), '50');
    await userEvent.type(within(area).getByLabelText('North'), '40');
    await waitFor(() =>
      expect(previewCount()).toHaveTextContent('bbox: south (50) is north of north (40)'),
    );

    await userEvent.click(screen.getByRole('button', { name: 'Create subscription' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not create the subscription');
    expect(alert).toHaveTextContent(
      'name: This field may not be blank.; bbox: south (50) is north of north (40)',
    );
    await waitFor(() => expect(alert).toHaveFocus());
    const name = screen.getByLabelText('Name');
    expect(name).toHaveAttribute('aria-invalid', 'true');
    expect(name).toHaveAccessibleDescription('This field may not be blank.');
    expect(area).toHaveAccessibleDescription('south (50) is north of north (40)');
  });

  it('creates a subscription, applies it to what is already archived and opens it', async () => {
    let created: SubscriptionBody | undefined;
    let applied: unknown;
    server.use(
      http.post('/api/v1/subscriptions/', async ({ request }) => {
        created = (await request.json()) as SubscriptionBody;
        return HttpResponse.json(subscription({ id: 9, ...created, bbox: null }), { status: 201 });
      }),
      http.post('/api/v1/subscriptions/9/apply/', async ({ request }) => {
        applied = await request.json();
        return HttpResponse.json(
          {
            detail: 'Granules archived since 2026-11-01 00:00 UTC that match are being delivered.',
            since: '2026-11-01T00:00:00Z',
          },
          { status: 202 },
        );
      }),
      http.get('/api/v1/subscriptions/9/', () =>
        HttpResponse.json(subscription({ id: 9, name: 'Snow', collections: ['MOD10C1.061'] })),
      ),
      http.get('/api/v1/subscriptions/9/deliveries/', () => HttpResponse.json(page([]))),
    );
    const { router } = renderApp('/subscriptions/new');
    await userEvent.type(await screen.findByLabelText('Name'), 'Snow');
    await userEvent.click(await screen.findByRole('checkbox', { name: /MOD10C1\.061/ }));
    expect(screen.getByRole('list', { name: 'Chosen collections' })).toHaveTextContent(
      'MOD10C1.061',
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Add a condition on another attribute' }),
    );
    const condition = screen.getByRole('group', { name: 'Condition 1' });
    await userEvent.type(within(condition).getByLabelText('Attribute'), 'snow_cover_pct');
    await userEvent.selectOptions(within(condition).getByLabelText('Test'), '≥');
    await userEvent.type(within(condition).getByLabelText('Value'), '10');
    await userEvent.click(
      screen.getByRole('radio', { name: 'Add to a standing order (HTTPS links)' }),
    );
    await userEvent.click(
      screen.getByRole('checkbox', {
        name: 'Also deliver new versions of granules that are reprocessed',
      }),
    );
    await userEvent.click(
      screen.getByRole('checkbox', {
        name: 'Also deliver matching granules already archived since a date',
      }),
    );
    const since = screen.getByLabelText('Archived since');
    await userEvent.clear(since);
    await userEvent.type(since, '2026-11-01');

    await userEvent.click(screen.getByRole('button', { name: 'Create subscription' }));

    expect(await screen.findByRole('heading', { name: /Snow/, level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/subscriptions/9');
    expect(created).toEqual({
      name: 'Snow',
      collections: ['MOD10C1.061'],
      bbox: null,
      start: null,
      end: null,
      conditions: [{ name: 'snow_cover_pct', op: 'gte', value: 10 }],
      new_versions: true,
      mode: 'order',
      destination: null,
    });
    expect(applied).toEqual({ since: '2026-11-01' });
    expect(
      screen.getByText(
        'Subscription “Snow” created. Granules archived since 2026-11-01 00:00 UTC that match are being delivered.',
      ),
    ).toBeInTheDocument();
  });

  it('a standing order cuts each delivered file: subset choices go with the subscription', async () => {
    let created: SubscriptionBody | undefined;
    server.use(
      http.get('/api/v1/collections/MOD10C1.061/', () =>
        HttpResponse.json({
          ...snow,
          key: 'MOD10C1.061',
          variables: [
            { name: 'lat', units: 'degrees_north', long_name: 'latitude' },
            { name: 'Day_CMG_Snow_Cover', units: '%', long_name: 'snow cover' },
          ],
        }),
      ),
      http.post('/api/v1/subscriptions/', async ({ request }) => {
        created = (await request.json()) as SubscriptionBody;
        return HttpResponse.json(
          { detail: 'A subset needs a subscription that delivers', errors: { subset: ['x'] } },
          { status: 400 },
        );
      }),
    );
    renderApp('/subscriptions/new');
    await userEvent.type(await screen.findByLabelText('Name'), 'Snow cut');
    await userEvent.click(await screen.findByRole('checkbox', { name: /MOD10C1\.061/ }));
    // a subscription that only notifies delivers no file: no subset offered
    expect(screen.queryByRole('checkbox', { name: /Cut each file/ })).toBeNull();
    await userEvent.click(
      screen.getByRole('radio', { name: 'Add to a standing order (HTTPS links)' }),
    );
    await userEvent.click(screen.getByRole('checkbox', { name: /Cut each file/ }));
    await userEvent.click(await screen.findByRole('checkbox', { name: 'Day_CMG_Snow_Cover' }));
    expect(screen.queryByRole('checkbox', { name: 'lat' })).toBeNull(); // coordinates stay
    for (const [side, value] of Object.entries({
      West: '170',
      South: '-10',
      East: '-170',
      North: '10',
    }))
      await userEvent.type(
        within(screen.getByRole('group', { name: /Area in degrees/ })).getByLabelText(side),
        value,
      );
    await userEvent.selectOptions(screen.getByLabelText('Output format'), 'zarr-zip');
    await userEvent.click(screen.getByRole('button', { name: 'Create subscription' }));
    await waitFor(() => expect(created).toBeDefined());
    expect(created?.subset).toEqual({
      variables: ['Day_CMG_Snow_Cover'],
      bbox: [170, -10, -170, 10],
      start: null,
      end: null,
      format: 'zarr-zip',
    });
    expect(created?.bbox).toBeNull(); // the subset's area is not the subscription's filter
  });

  it('edits an existing subscription, keeping what the form does not change', async () => {
    let patched: Partial<SubscriptionBody> | undefined;
    const original = subscription({ start: '2026-11-01T06:30:00Z' });
    server.use(
      http.get('/api/v1/subscriptions/7/', () => HttpResponse.json(original)),
      http.patch('/api/v1/subscriptions/7/', async ({ request }) => {
        patched = (await request.json()) as Partial<SubscriptionBody>;
        return HttpResponse.json({ ...original, ...patched });
      }),
      http.get('/api/v1/subscriptions/7/deliveries/', () => HttpResponse.json(page([]))),
    );
    renderApp('/subscriptions/7/edit');
    const name = await screen.findByLabelText('Name');
    expect(name).toHaveValue('Fires over California');
    expect(screen.getByLabelText('West')).toHaveValue(-125);
    expect(screen.getByLabelText('From')).toHaveValue('2026-11-01');
    expect(screen.getByLabelText('Day or night')).toHaveValue('Day');
    expect(screen.getByLabelText('Cloud cover below (%)')).toHaveValue(20);

    await userEvent.clear(screen.getByLabelText('Cloud cover below (%)'));
    await userEvent.type(screen.getByLabelText('Cloud cover below (%)'), '35');
    await userEvent.click(screen.getByRole('button', { name: 'Save changes' }));

    expect(await screen.findByText('Saved “Fires over California”.')).toBeInTheDocument();
    expect(patched).toMatchObject({
      bbox: [-125, 32, -114, 42],
      start: '2026-11-01T06:30:00Z',
      end: '2026-11-30T23:59:59.999999Z',
      conditions: [
        { name: 'day_night', op: 'eq', value: 'Day' },
        { name: 'cloud_cover', op: 'lt', value: 35 },
      ],
    });
  });

  it('logs out of the edit page without asking the API anything more as nobody', async () => {
    // A CI journey once saw the preview asked again with the session gone (a 401): the page's
    // data was dropped while it was still on screen, and it re-rendered before it left.
    let loggedOut = false;
    let formWhenSessionEnded: boolean | undefined;
    const asNobody: string[] = [];
    server.events.on('request:start', ({ request }) => {
      if (loggedOut && request.url.includes('/api/v1/subscriptions')) asNobody.push(request.url);
    });
    server.use(
      http.get('/api/v1/me/', () => HttpResponse.json(loggedOut ? anonymous : scientist)),
      http.post('/api/v1/auth/logout/', () => {
        // the page leaves the screen before the session ends (nothing of it can ask as nobody)
        formWhenSessionEnded = screen.queryByLabelText('Cloud cover below (%)') !== null;
        loggedOut = true;
        return new HttpResponse(null, { status: 204 });
      }),
      http.get('/api/v1/subscriptions/7/', () => HttpResponse.json(subscription())),
    );
    const { router } = renderApp('/subscriptions/7/edit');
    await waitFor(() => expect(previewCount()).toHaveTextContent('12 granules'));
    // A change waits in the preview's debounce while the user logs out.
    await userEvent.type(screen.getByLabelText('Cloud cover below (%)'), '5');

    await userEvent.click(screen.getByRole('button', { name: 'Log out' }));

    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(await screen.findByRole('link', { name: 'Log in' })).toBeInTheDocument();
    // Past the preview's debounce: whatever the page had waiting is gone with it.
    await new Promise((resolve) => setTimeout(resolve, 600));
    server.events.removeAllListeners();
    expect(formWhenSessionEnded).toBe(false);
    expect(asNobody).toEqual([]);
  });

  it('asks for a destination for push delivery and can add one', async () => {
    const destinations = [
      {
        id: 3,
        name: 'feed',
        path: '',
        folder: '/outbox/scientist/feed',
        created_at: '2026-11-01T00:00:00Z',
      },
    ];
    server.use(
      http.get('/api/v1/destinations/', () => HttpResponse.json(destinations)),
      http.post('/api/v1/destinations/', async ({ request }) => {
        const { name } = (await request.json()) as { name: string };
        if (name === 'feed') {
          return HttpResponse.json(
            { detail: 'name: You already have a destination named feed.' },
            { status: 400 },
          );
        }
        const made = {
          id: 4,
          name,
          path: '',
          folder: `/outbox/scientist/${name}`,
          created_at: '2026-11-22T00:00:00Z',
        };
        destinations.push(made);
        return HttpResponse.json(made, { status: 201 });
      }),
    );
    renderApp('/subscriptions/new');
    await userEvent.click(
      await screen.findByRole('radio', { name: 'Push into a destination (folder or SFTP)' }),
    );
    const select = await screen.findByLabelText('Destination');
    expect(
      await within(select).findByRole('option', { name: 'feed (/outbox/scientist/feed)' }),
    ).toBeInTheDocument();

    await userEvent.type(screen.getByLabelText('New destination name'), 'feed');
    await userEvent.click(screen.getByRole('button', { name: 'Add destination' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'name: You already have a destination named feed.',
    );

    await userEvent.clear(screen.getByLabelText('New destination name'));
    await userEvent.type(screen.getByLabelText('New destination name'), 'fires');
    await userEvent.click(screen.getByRole('button', { name: 'Add destination' }));
    await waitFor(() => expect(select).toHaveValue('4'));
  });

  it('asks visitors to log in first', async () => {
    server.use(
      http.get('/api/v1/me/', () =>
        HttpResponse.json({
          authenticated: false,
          username: '',
          email: '',
          role: 'anonymous',
          roles: [],
          providers: [],
        }),
      ),
    );
    renderApp('/subscriptions/new');
    const link = await within(await screen.findByRole('main')).findByRole('link', {
      name: 'Log in',
    });
    expect(link.closest('p')).toHaveTextContent('Log in to create a subscription.');
  });
});
