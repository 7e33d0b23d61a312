import type { SubscriptionFilter } from '../types';

/** Cache keys of the user's subscriptions, their delivery logs and filter previews. */
export const subscriptionKeys = {
  all: ['subscriptions'] as const,
  list: (cursor: string | null) => [...subscriptionKeys.all, 'list', { cursor }] as const,
  detail: (id: number) => [...subscriptionKeys.all, 'one', id] as const,
  deliveries: (id: number, cursor: string | null) =>
    [...subscriptionKeys.all, 'deliveries', id, { cursor }] as const,
  preview: (filter: SubscriptionFilter) => [...subscriptionKeys.all, 'preview', filter] as const,
};
