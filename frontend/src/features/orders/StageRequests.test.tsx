import { screen } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { expect, it } from 'vitest';

import type { StageRequest } from '../../lib/api/types';
import { renderApp } from '../../test/renderApp';
import { asOperator, page, server } from '../../test/server';

const STAGE: StageRequest = {
  id: '0b4c7a52-6a4f-4b4e-9d43-51a4c1e2f9aa',
  user: 'scientist',
  priority: 1,
  file_count: 2000,
  counts: { SUBMITTED: 1500, STARTED: 0, COMPLETED: 500, CANCELLED: 0, FAILED: 0 },
  eta_s: 600,
  bound_at: '2026-11-29T12:30:00Z',
  volumes_planned: 12,
  created_at: '2026-11-29T10:00:00Z',
  started_at: '2026-11-29T10:01:00Z',
  completed_at: null,
};

it('shows a stage request with its ETA and the bound by which every file is final', async () => {
  asOperator();
  server.use(
    http.get('/api/v1/stage-requests/', () => HttpResponse.json(page([STAGE]))),
    http.get('/api/v1/orders/', () => HttpResponse.json(page([]))),
  );
  renderApp('/orders');
  const row = (await screen.findByRole('row', { name: /0b4c7a52/ }, { timeout: 5000 })).closest(
    'tr',
  )!;
  expect(row).toHaveTextContent('1,500 waiting');
  expect(row).toHaveTextContent('about 10 min (by 29 Nov, 12:30 UTC)');
});
