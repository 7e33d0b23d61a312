import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';

import type { Cart, Collection, Me, Page } from '../lib/api/types';

export const anonymous: Me = {
  authenticated: false,
  username: '',
  email: '',
  role: 'anonymous',
  roles: [],
  providers: [],
};

export function collection(overrides: Partial<Collection> = {}): Collection {
  const shortName = overrides.short_name ?? 'MOD021KM';
  const version = overrides.version ?? '061';
  return {
    id: 1,
    key: `${shortName}.${version}`,
    short_name: shortName,
    version,
    title: 'MODIS/Terra Calibrated Radiances 5-Min L1B Swath 1km',
    description: 'Calibrated and geolocated at-aperture radiances.',
    processing_level: '1B',
    platform: 'Terra',
    instrument: 'MODIS',
    access: 'public',
    file_patterns: [],
    duplicate_policy: 'error',
    granule_count: 12,
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
    ...overrides,
  };
}

export function page<T>(results: T[], links: Partial<Page<T>> = {}): Page<T> {
  return { next: null, previous: null, results, ...links };
}

export const emptyCart: Cart = {
  count: 0,
  bytes: 0,
  granules: [],
  withdrawn: [],
  limits: { granules: 2000, bytes: 500e9, open_orders: 10, open_orders_used: 0 },
};

/** Defaults every page needs; tests override the endpoint they are about. */
export const server = setupServer(
  http.get('/api/v1/me/', () => HttpResponse.json(anonymous)),
  // The login page offers single sign-on when a provider is configured: none by default.
  http.get('/api/v1/auth/methods/', () => HttpResponse.json({ local: true, oidc: null })),
  http.get('/api/v1/collections/', () => HttpResponse.json(page([]))),
  // The navigation shows logged-in users how full their cart is.
  http.get('/api/v1/cart/', () => HttpResponse.json(emptyCart)),
  // The operators' overview ranks collections by completeness.
  http.get('/api/v1/completeness/worst/', () =>
    HttpResponse.json({ days: 7, since: '2026-01-01T00:00:00Z', collections: [] }),
  ),
  // A subscription's page lists the webhooks told of its deliveries.
  http.get('/api/v1/event-endpoints/', () => HttpResponse.json([])),
);

export const operator: Me = {
  authenticated: true,
  username: 'ops',
  email: 'ops@example.org',
  role: 'operator',
  roles: ['operator'],
  providers: [],
};

/** Answer /me/ as the operator. */
export function asOperator() {
  server.use(http.get('/api/v1/me/', () => HttpResponse.json(operator)));
}

export const scientist: Me = {
  authenticated: true,
  username: 'scientist',
  email: 'scientist@example.org',
  role: 'user',
  roles: ['user'],
  providers: [],
};

/** Answer /me/ as a logged-in scientist (or `me`). */
export function asUser(me: Me = scientist) {
  server.use(http.get('/api/v1/me/', () => HttpResponse.json(me)));
}
