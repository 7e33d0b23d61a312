/** Test data for the subscription pages (used by the Vitest files only). */
import type { Subscription, SubscriptionDelivery } from '../../lib/api/types';

export function subscription(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: 7,
    name: 'Fires over California',
    collections: ['MOD021KM.061'],
    bbox: [-125, 32, -114, 42],
    intersects: null,
    start: '2026-11-01T00:00:00Z',
    end: '2026-11-30T23:59:59.999999Z',
    conditions: [
      { name: 'day_night', op: 'eq', value: 'Day' },
      { name: 'cloud_cover', op: 'lt', value: 20 },
    ],
    mode: 'notify',
    destination: null,
    new_versions: false,
    subset: null,
    active: true,
    created_at: '2026-11-20T10:00:00Z',
    ...overrides,
  };
}

export function delivery(
  id: number,
  overrides: Partial<SubscriptionDelivery> = {},
): SubscriptionDelivery {
  return {
    id,
    granule_pk: 100 + id,
    granule: `MOD021KM.061:MOD021KM.A2026320.${String(id).padStart(4, '0')}.061`,
    state: 'delivered',
    attempts: 1,
    detail: 'notified',
    created_at: '2026-11-21T08:00:00Z',
    delivered_at: '2026-11-21T08:00:02Z',
    ...overrides,
  };
}
