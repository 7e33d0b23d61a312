import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { beforeEach, expect, it } from 'vitest';

import { renderApp } from '../../test/renderApp';
import { asUser, page, server } from '../../test/server';
import { subscription } from './fixtures';

beforeEach(() => asUser());

it('adds a webhook to a subscription, shows its secret once and its delivery log', async () => {
  const made: unknown[] = [];
  const hook = {
    id: 4,
    kind: 'webhook',
    name: 'subscriptions/7',
    url: 'https://lab.example.org/hook',
    enabled: true,
    rules: [{ type: 'subscription.matched', collection_key: '', subject: 'subscriptions/7' }],
    created_at: '2026-11-21T08:00:00Z',
  };
  server.use(
    http.get('/api/v1/subscriptions/7/', () => HttpResponse.json(subscription())),
    http.get('/api/v1/subscriptions/7/deliveries/', () => HttpResponse.json(page([]))),
    http.get('/api/v1/event-endpoints/', () => HttpResponse.json(made.length ? [hook] : [])),
    http.post('/api/v1/event-endpoints/', async ({ request }) => {
      made.push(await request.json());
      return HttpResponse.json({ ...hook, secret: 'whsec_c2VjcmV0' }, { status: 201 });
    }),
    http.get('/api/v1/event-endpoints/4/deliveries/', () =>
      HttpResponse.json([
        {
          id: 1,
          endpoint: 4,
          event_id: '0b7e6f5c-4a51-4f0e-9a53-2d3b1c0e9f11',
          event_type: 'test',
          subject: 'endpoints/4',
          event_time: '2026-11-21T08:00:00Z',
          state: 'dead',
          attempts: 8,
          due_at: '2026-11-21T08:00:00Z',
          last_status: 503,
          last_error: 'HTTP 503: busy',
          latency_ms: null,
          delivered_at: null,
        },
      ]),
    ),
  );
  renderApp('/subscriptions/7');
  const section = await screen.findByRole('region', { name: 'Webhooks' });
  await userEvent.type(within(section).getByLabelText('Webhook URL'), hook.url);
  await userEvent.click(within(section).getByRole('button', { name: 'Add webhook' }));
  expect(await within(section).findByRole('status')).toHaveTextContent('whsec_c2VjcmV0');
  expect(made).toEqual([
    {
      kind: 'webhook',
      url: hook.url,
      name: 'subscriptions/7',
      rules: [{ type: 'subscription.matched', subject: 'subscriptions/7' }],
    },
  ]);
  const rows = (await within(section).findAllByRole('row')).slice(1);
  expect(rows[0]).toHaveTextContent('Dead');
  expect(rows[0]).toHaveTextContent('HTTP 503: busy');
  expect(rows[0]).toHaveTextContent('8');
});
