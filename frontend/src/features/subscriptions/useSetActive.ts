import { useMutation, useQueryClient } from '@tanstack/react-query';

import { updateSubscription } from './api/subscription';
import type { Subscription } from './api/subscriptions';

/** Pause (active=false) or resume a subscription; every cached copy of it is refreshed. */
export function useSetActive() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ subscription, active }: { subscription: Subscription; active: boolean }) =>
      updateSubscription(subscription.id, { active }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['subscriptions'] }),
  });
}
