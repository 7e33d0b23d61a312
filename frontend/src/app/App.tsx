import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { RouterProvider } from 'react-router';

import { flushNavigation } from '../lib/flushNavigation';
import { createQueryClient } from './queryClient';
import { createAppRouter } from './router';

export function App({ queryClient }: { queryClient?: QueryClient }) {
  // Created once per mount so a test or a hot reload never shares a cache by accident.
  const [client] = useState(() => queryClient ?? createQueryClient());
  const [router] = useState(createAppRouter);
  return (
    <QueryClientProvider client={client}>
      <RouterProvider router={router} flushSync={flushNavigation} />
    </QueryClientProvider>
  );
}
