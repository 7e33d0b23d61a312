import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';

import { routes } from '../app/router';
import { flushNavigation } from '../lib/flushNavigation';

/** The real routes and layout at `path`, with a fresh cache and no retries to wait for. */
export function renderApp(path = '/') {
  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: false } },
  });
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const view = render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} flushSync={flushNavigation} />
    </QueryClientProvider>,
  );
  return { ...view, router, queryClient };
}
