import { QueryClient } from '@tanstack/react-query';

import { ApiError } from '../lib/api/client';

/** Retry only what may pass on a second try: unreachable server or a gateway hiccup. */
function shouldRetry(failureCount: number, error: unknown): boolean {
  if (failureCount >= 2) return false;
  if (!(error instanceof ApiError)) return false;
  return error.status === 0 || error.status === 502 || error.status === 503 || error.status === 504;
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
