/**
 * The one way the app talks to the Granary API.
 *
 * Session auth rides on the same-origin cookie; Django wants the CSRF token echoed in
 * X-CSRFToken on unsafe methods. Errors become ApiError with the API's `detail` sentence,
 * so every screen can show the server's own explanation.
 */

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status; 0 when the server could not be reached at all. */
  readonly status: number;
  /** Human sentence from the API's `detail`, or a fallback when the body had none. */
  readonly detail: string;
  /** Per-field errors from the API's `errors`, when it sent them. */
  readonly errors: unknown;
  /** The whole JSON body, for the fields some answers carry besides `detail` (a 410's time). */
  readonly body: unknown;

  constructor(status: number, detail: string, errors?: unknown, body?: unknown) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.errors = errors;
    this.body = body;
  }
}

export function readCookie(name: string): string | undefined {
  const prefix = `${name}=`;
  for (const part of document.cookie.split(';')) {
    const item = part.trim();
    if (item.startsWith(prefix)) return decodeURIComponent(item.slice(prefix.length));
  }
  return undefined;
}

export type QueryParams = Record<string, string | number | boolean | null | undefined>;

export interface ApiRequest extends Omit<RequestInit, 'body'> {
  /** Added to the query string; empty, null and undefined values are left out. */
  params?: QueryParams;
  /** Sent as JSON. */
  json?: unknown;
  body?: BodyInit | null;
}

/** Absolute URL on this origin; also accepts the absolute `next` links the API returns. */
export function apiUrl(path: string, params?: QueryParams): URL {
  const url = new URL(path, window.location.href);
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value === undefined || value === null || value === '') continue;
    url.searchParams.set(key, String(value));
  }
  return url;
}

async function errorFrom(response: Response): Promise<ApiError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    // An HTML error page from a proxy or a crashed worker: say what we know.
  }
  if (body && typeof body === 'object' && 'detail' in body && typeof body.detail === 'string') {
    const errors = 'errors' in body ? body.errors : undefined;
    return new ApiError(response.status, body.detail, errors, body);
  }
  const reason = response.statusText
    ? `${response.status} ${response.statusText}`
    : `${response.status}`;
  return new ApiError(response.status, `The server answered ${reason}.`, body);
}

export async function apiFetch<T>(path: string, request: ApiRequest = {}): Promise<T> {
  const { params, json, headers: extraHeaders, ...init } = request;
  const method = (init.method ?? 'GET').toUpperCase();
  const headers = new Headers(extraHeaders);
  headers.set('Accept', 'application/json');
  if (json !== undefined) {
    headers.set('Content-Type', 'application/json');
    init.body = JSON.stringify(json);
  }
  if (!SAFE_METHODS.has(method)) {
    const token = readCookie('csrftoken');
    if (token) headers.set('X-CSRFToken', token);
  }

  let response: Response;
  try {
    response = await fetch(apiUrl(path, params), {
      ...init,
      method,
      headers,
      credentials: 'same-origin',
    });
  } catch (error) {
    // Let cancellations through untouched so TanStack Query can tell them apart.
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(
      0,
      'Could not reach the Granary server. Check your connection and try again.',
    );
  }

  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Statuses where the same request may well succeed a little later: overload and gateways. */
const TRANSIENT_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Whether asking again can help: the server was unreachable, busy or failed on its side. A 404
 * or a refused (400/403) request gets the same answer every time, so no "Try again" for those.
 */
export function canRetry(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  return error.status === 0 || TRANSIENT_STATUSES.has(error.status);
}

/** The `cursor` value inside a `next`/`previous` link, to keep it in the page's own URL. */
export function cursorOf(link: string | null): string | null {
  if (!link) return null;
  return new URL(link, window.location.href).searchParams.get('cursor');
}

/** Per-field messages from an API error's `errors`, one sentence per field. */
export function fieldErrors(errors: unknown): Record<string, string> {
  if (!errors || typeof errors !== 'object' || Array.isArray(errors)) return {};
  const out: Record<string, string> = {};
  for (const [field, value] of Object.entries(errors as Record<string, unknown>)) {
    out[field] = Array.isArray(value) ? value.map(String).join(' ') : String(value);
  }
  return out;
}
