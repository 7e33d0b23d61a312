/** Cache keys of the operators' configuration: one root, so a change refreshes every list. */
export const configKeys = {
  all: ['config'] as const,
  collections: () => [...configKeys.all, 'collections'] as const,
  collection: (key: string) => [...configKeys.all, 'collections', key] as const,
  providers: () => [...configKeys.all, 'providers'] as const,
  provider: (name: string) => [...configKeys.all, 'providers', name] as const,
  users: () => [...configKeys.all, 'users'] as const,
  audit: (filters: AuditFilters) => [...configKeys.all, 'audit', filters] as const,
};

/** The audit log's filters as the API names them; empty ones are left out of the query. */
export interface AuditFilters {
  target_type?: string;
  target_id?: string;
  actor?: string;
  action?: string;
  since?: string;
  until?: string;
}
