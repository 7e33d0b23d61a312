import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { AuditEvent, Page } from '../types';
import { configKeys, type AuditFilters } from './keys';

/** GET /api/v1/config/audit/: operators' changes, newest first; `cursor` pages on. */
export function auditQuery(filters: AuditFilters & { cursor?: string }) {
  return queryOptions({
    queryKey: configKeys.audit(filters),
    queryFn: ({ signal }) =>
      apiFetch<Page<AuditEvent>>('/api/v1/config/audit/', { signal, params: { ...filters } }),
  });
}
