import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';

import { DeliveryLog } from '../../components/events/DeliveryLog';
import { Loaded } from '../../components/Loaded';
import { createEventEndpoint, eventEndpointsQuery } from '../../lib/api/events/endpoints';
import { eventKeys } from '../../lib/api/events/keys';

/** Webhooks told of each granule this subscription delivers (a `subscription.matched` rule on
 * this subscription's subject), each with its delivery log and a test button. */
export function SubscriptionWebhooks({ subscriptionId }: { subscriptionId: number }) {
  const subject = `subscriptions/${subscriptionId}`;
  const endpoints = useQuery(eventEndpointsQuery());
  return (
    <section className="page-section" aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">Webhooks</h2>
      <p className="hint">
        Each granule delivered is also sent, signed (Standard Webhooks), to these URLs as a
        CloudEvents document.
      </p>
      <Loaded query={endpoints} what="your webhooks">
        {(rows) => (
          <>
            {rows
              .filter((e) => e.kind === 'webhook' && e.rules?.some((r) => r.subject === subject))
              .map((e) => (
                <DeliveryLog key={e.id} endpoint={e} />
              ))}
          </>
        )}
      </Loaded>
      <AddWebhook subject={subject} />
    </section>
  );
}

function AddWebhook({ subject }: { subject: string }) {
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const add = useMutation({
    mutationFn: () =>
      createEventEndpoint({
        kind: 'webhook',
        url,
        name: subject,
        rules: [{ type: 'subscription.matched', subject }],
      }),
    onSuccess: async () => {
      setUrl('');
      await queryClient.invalidateQueries({ queryKey: eventKeys.all });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    add.mutate();
  }
  return (
    <form className="form-row" onSubmit={submit}>
      <label>
        Webhook URL
        <input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
      </label>
      <button type="submit" className="button" disabled={add.isPending}>
        Add webhook
      </button>
      {add.error && (
        <p className="notice notice--error" role="alert">
          {add.error.message}
        </p>
      )}
      {add.data && (
        <p className="notice notice--ok" role="status">
          Webhook added. Its signing secret, shown this once:{' '}
          <code className="mono wrap" data-testid="webhook-secret">
            {add.data.secret}
          </code>
        </p>
      )}
    </form>
  );
}
