import { QueryClient } from '@tanstack/react-query';

import { canRetry } from '../lib/api/client';

/** Retry only what may pass on a second try (the same rule as the "Try again" button). */
function shouldRetry(failureCount: number, error: unknown): boolean {
  return failureCount < 2 && canRetry(error);
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 30 * 1000,
        retry: shouldRetry,
        refetchOnWindowFocus: false,
      },
    },
  });
}
