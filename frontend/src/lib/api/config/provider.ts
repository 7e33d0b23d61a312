import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { ProviderConfig, ProviderConfigChange } from '../types';
import { configKeys } from './keys';

function url(name: string) {
  return `/api/v1/config/providers/${encodeURIComponent(name)}/`;
}

/** GET /api/v1/config/providers/{name}/ */
export function configProviderQuery(name: string) {
  return queryOptions({
    queryKey: configKeys.provider(name),
    queryFn: ({ signal }) => apiFetch<ProviderConfig>(url(name), { signal }),
  });
}

/** PATCH /api/v1/config/providers/{name}/ */
export function updateProvider(name: string, body: Partial<ProviderConfigChange>) {
  return apiFetch<ProviderConfig>(url(name), { method: 'PATCH', json: body });
}
