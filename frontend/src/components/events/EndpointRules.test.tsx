import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { expect, it } from 'vitest';

import { renderApp } from '../../test/renderApp';
import { asOperator, asUser, server } from '../../test/server';

const TYPES = [
  { type: 'granule.archived', description: 'archived', operators_only: false },
  { type: 'granule.failed', description: 'failed', operators_only: false },
  { type: 'order.ready', description: 'ready', operators_only: false },
  { type: 'drive.offline', description: 'a drive went offline', operators_only: true },
  { type: 'queue.stuck', description: 'a queue is stuck', operators_only: true },
];

function answering(made: unknown[], collections: string[]) {
  server.use(
    http.get('/api/v1/event-endpoints/choices/', () =>
      HttpResponse.json({ types: TYPES, collections }),
    ),
    http.get('/api/v1/event-endpoints/', () => HttpResponse.json([])),
    http.post('/api/v1/event-endpoints/', async ({ request }) => {
      made.push(await request.json());
      return HttpResponse.json({ id: 9, secret: 'whsec_c2VjcmV0' }, { status: 201 });
    }),
  );
}

it("subscribes a provider's chosen collections' ingest events to a webhook", async () => {
  asUser({
    authenticated: true,
    username: 'modaps',
    email: 'modaps@example.org',
    role: 'provider',
    roles: ['provider'],
    providers: ['MODAPS'],
  });
  const made: unknown[] = [];
  answering(made, ['MOD09GA.061', 'MOD13Q1.061']);
  renderApp('/provider/notifications');
  const form = (await screen.findByText('New endpoint')).closest('form') as HTMLElement;
  expect(within(form).queryByText('order.ready')).toBeNull(); // not an ingest event
  await userEvent.type(within(form).getByLabelText('Webhook URL'), 'https://p.example.org/h');
  await userEvent.click(within(form).getByRole('checkbox', { name: /MOD13Q1\.061/ }));
  await userEvent.click(within(form).getByRole('button', { name: 'Add endpoint' }));
  expect(await within(form).findByRole('status')).toHaveTextContent('whsec_c2VjcmV0');
  expect(made).toEqual([
    {
      kind: 'webhook',
      url: 'https://p.example.org/h',
      name: 'Ingest events',
      rules: [{ type: 'granule.archived', collection_key: 'MOD09GA.061' }],
    },
  ]);
});

it('makes an operator a rule per alert type to a channel', async () => {
  asOperator();
  const made: unknown[] = [];
  answering(made, []);
  renderApp('/config/alerts');
  const form = (await screen.findByText('New endpoint')).closest('form') as HTMLElement;
  expect(within(form).queryByText('granule.archived')).toBeNull();
  await userEvent.click(within(form).getByRole('checkbox', { name: /queue\.stuck/ }));
  await userEvent.click(within(form).getByRole('button', { name: 'Add endpoint' }));
  expect(await within(form).findByRole('status')).toHaveTextContent('Endpoint added');
  expect(made).toEqual([
    {
      kind: 'email',
      url: '',
      name: 'Alerts',
      rules: [{ type: 'drive.offline' }, { type: 'queue.stuck' }],
    },
  ]);
});
