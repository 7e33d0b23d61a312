import { queryOptions } from '@tanstack/react-query';

import { apiFetch, type Page } from '../../../lib/api';

export type DeliveryMode = 'notify' | 'push' | 'order';
export type ConditionOp = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in';
export type ConditionValue = string | number | boolean | (string | number)[];

/** One attribute condition, e.g. {name: "cloud_cover", op: "lt", value: 20}. */
export interface Condition {
  name: string;
  op: ConditionOp;
  value: ConditionValue;
}

/** What a subscription matches; the preview takes the same body. */
export interface SubscriptionFilter {
  collections: string[];
  /** [west, south, east, north]; strings are sent as typed so the API can say what is wrong. */
  bbox: (number | string)[] | null;
  start: string | null;
  end: string | null;
  conditions: Condition[];
  new_versions: boolean;
}

export interface SubscriptionBody extends SubscriptionFilter {
  name: string;
  mode: DeliveryMode;
  destination: number | null;
  active?: boolean;
}

/** A subscription as GET /api/v1/subscriptions/ returns it. */
export interface Subscription extends SubscriptionFilter {
  id: number;
  name: string;
  bbox: [number, number, number, number] | null;
  mode: DeliveryMode;
  destination: number | null;
  active: boolean;
  created_at: string;
}

export const MODE_LABELS: Record<DeliveryMode, string> = {
  notify: 'Notify me by email',
  push: 'Push into a destination (folder or SFTP)',
  order: 'Add to a standing order (HTTPS links)',
};

/** GET /api/v1/subscriptions/: the caller's subscriptions, newest first. */
export function subscriptionsQuery(cursor: string | null = null) {
  return queryOptions({
    queryKey: ['subscriptions', 'list', { cursor }] as const,
    queryFn: ({ signal }) =>
      apiFetch<Page<Subscription>>('/api/v1/subscriptions/', { params: { cursor }, signal }),
  });
}

/** POST /api/v1/subscriptions/ */
export function createSubscription(body: SubscriptionBody) {
  return apiFetch<Subscription>('/api/v1/subscriptions/', { method: 'POST', json: body });
}
