import { apiFetch, type QueryParams } from '../client';

/** Parameters that page or sort a search; they stay in the query string of a POST search. */
const PAGING = new Set(['cursor', 'limit', 'ordering']);

/**
 * A granule search request: a GET with the filters in the query string, or, when the search
 * has a shape (`intersects`, which can be thousands of vertices long), a POST of the filters as
 * a JSON body to `postPath` with paging left in the query string, as the API asks.
 */
export function searchFetch<T>(
  path: string,
  postPath: string,
  params: QueryParams,
  signal?: AbortSignal,
): Promise<T> {
  if (!params.intersects) return apiFetch<T>(path, { params, signal });
  const paging: QueryParams = {};
  const body: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    if (PAGING.has(key)) paging[key] = value;
    else body[key] = String(value);
  }
  return apiFetch<T>(postPath, { method: 'POST', params: paging, json: body, signal });
}
