import type { QueryParams } from '../client';

/** Cache keys of granules: searches (with their facet counts and timelines), single granules. */
export const granuleKeys = {
  all: ['granules'] as const,
  list: (params: QueryParams) => [...granuleKeys.all, 'list', params] as const,
  /** A page of the search with its facets and timeline (granuleSearchQuery). */
  search: (params: QueryParams) => [...granuleKeys.all, 'search', params] as const,
  detail: (id: number) => [...granuleKeys.all, 'detail', id] as const,
};
