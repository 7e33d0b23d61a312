import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { expect, it } from 'vitest';

import type { RecallShare } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asOperator, server } from '../../test/server';

const SHARES: RecallShare[] = [
  { kind: 'order', label: 'Portal and API orders', weight: 1, set: false, served: 12 },
  { kind: 'stage', label: 'Stage requests (Tape REST API)', weight: 1, set: false, served: 4 },
];

it('an operator sets the weights of the kinds of recall, with a reason', async () => {
  asOperator();
  let sent: unknown;
  server.use(
    http.get('/api/v1/config/recall-shares/', () => HttpResponse.json(SHARES)),
    http.put('/api/v1/config/recall-shares/', async ({ request }) => {
      sent = await request.json();
      return HttpResponse.json(SHARES);
    }),
  );
  const user = userEvent.setup();
  renderApp('/config/recall-shares');
  const orders = await screen.findByLabelText(/Portal and API orders \(12 lately\)/, undefined, {
    timeout: 5000,
  });
  await user.clear(orders);
  await user.click(orders);
  await user.paste('3');
  await user.click(screen.getByLabelText('Reason (for the audit log)'));
  await user.paste('grid campaign');
  await user.click(screen.getByRole('button', { name: 'Save weights' }));
  await waitFor(() =>
    expect(sent).toEqual({ weights: { order: 3, stage: 1 }, reason: 'grid campaign' }),
  );
});

it('shows the reason a weight was refused', async () => {
  asOperator();
  server.use(
    http.get('/api/v1/config/recall-shares/', () => HttpResponse.json(SHARES)),
    http.put('/api/v1/config/recall-shares/', () =>
      HttpResponse.json(
        { detail: 'invalid', errors: { weights: ['must be a whole number from 1 to 1000.'] } },
        { status: 400 },
      ),
    ),
  );
  const user = userEvent.setup();
  renderApp('/config/recall-shares');
  await user.click(await screen.findByRole('button', { name: 'Save weights' }, { timeout: 5000 }));
  expect(await screen.findByRole('alert')).toHaveTextContent('whole number from 1 to 1000');
});
