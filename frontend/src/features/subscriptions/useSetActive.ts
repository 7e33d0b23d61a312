import { useMutation, useQueryClient } from '@tanstack/react-query';

import { subscriptionKeys } from '../../api/subscriptions/keys';
import { updateSubscription } from '../../api/subscriptions/subscription';
import type { Subscription } from '../../api/types';

/** Pause (active=false) or resume a subscription; every cached copy of it is refreshed. */
export function useSetActive() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ subscription, active }: { subscription: Subscription; active: boolean }) =>
      updateSubscription(subscription.id, { active }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: subscriptionKeys.all }),
  });
}
