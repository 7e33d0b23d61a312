import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { ProviderConfig, ProviderConfigChange } from '../types';
import { configKeys } from './keys';

/** GET /api/v1/config/providers/ */
export function configProvidersQuery() {
  return queryOptions({
    queryKey: configKeys.providers(),
    queryFn: ({ signal }) => apiFetch<ProviderConfig[]>('/api/v1/config/providers/', { signal }),
  });
}

/** POST /api/v1/config/providers/ */
export function createProvider(body: ProviderConfigChange) {
  return apiFetch<ProviderConfig>('/api/v1/config/providers/', { method: 'POST', json: body });
}
