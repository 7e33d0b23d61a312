import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { OrderLinks } from '../types';
import { orderKeys } from './keys';

/**
 * GET /api/v1/orders/{id}/links/: signed links of the ready files, fetched anew as soon as
 * more files are ready (see orderKeys.links).
 */
export function orderLinksQuery(id: number, ready: number, enabled: boolean) {
  return queryOptions({
    queryKey: orderKeys.links(id, ready),
    queryFn: ({ signal }) => apiFetch<OrderLinks>(`/api/v1/orders/${id}/links/`, { signal }),
    enabled,
  });
}
