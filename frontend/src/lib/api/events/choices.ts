import { queryOptions } from '@tanstack/react-query';

import { apiFetch } from '../client';
import type { EventRuleChoices } from '../types';
import { eventKeys } from './keys';

/** GET /api/v1/event-endpoints/choices/: the event types a rule may name (alerts only for
 * operators) and the collections whose ingest events the caller may have. */
export function eventRuleChoicesQuery() {
  return queryOptions({
    queryKey: eventKeys.choices(),
    queryFn: ({ signal }) =>
      apiFetch<EventRuleChoices>('/api/v1/event-endpoints/choices/', { signal }),
    staleTime: 5 * 60 * 1000,
  });
}
