import type { QueryParams } from '../client';

/** Cache keys of granules: searches, their facet counts and timelines, and single granules. */
export const granuleKeys = {
  all: ['granules'] as const,
  list: (params: QueryParams) => [...granuleKeys.all, 'list', params] as const,
  timeline: (params: QueryParams) => [...granuleKeys.all, 'timeline', params] as const,
  facets: (params: QueryParams) => [...granuleKeys.all, 'facets', params] as const,
  detail: (id: number) => [...granuleKeys.all, 'detail', id] as const,
};
