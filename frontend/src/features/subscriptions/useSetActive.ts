import { useMutation, useQueryClient } from '@tanstack/react-query';

import { subscriptionKeys } from '../../lib/api/subscriptions/keys';
import { updateSubscription } from '../../lib/api/subscriptions/subscription';
import type { Subscription } from '../../lib/api/types';

/** Pause (active=false) or resume a subscription; every cached copy of it is refreshed. */
export function useSetActive() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ subscription, active }: { subscription: Subscription; active: boolean }) =>
      updateSubscription(subscription.id, { active }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: subscriptionKeys.all }),
  });
}
