import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';

import { eventDeliveriesQuery } from '../../lib/api/events/deliveries';
import { createEventEndpoint, eventEndpointsQuery } from '../../lib/api/events/endpoints';
import { eventKeys } from '../../lib/api/events/keys';
import { sendTestEvent } from '../../lib/api/events/testEvent';
import type { EventDelivery, EventDeliveryState, EventEndpoint } from '../../lib/api/types';
import { DataTable, type Column } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { StateBadge, type Tone } from '../../components/StateBadge';
import { formatDateTime } from '../../lib/format';

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
                <WebhookLog key={e.id} endpoint={e} />
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

const STATES: Record<EventDeliveryState, [string, Tone]> = {
  pending: ['Pending', 'plain'],
  delivered: ['Delivered', 'ok'],
  dead: ['Dead', 'bad'],
};

const COLUMNS: Column<EventDelivery>[] = [
  {
    label: 'Event',
    rowHeader: true,
    cell: (row) => <span className="mono">{row.event_type}</span>,
  },
  {
    label: 'State',
    cell: (row) => {
      const [label, tone] = STATES[row.state] ?? [row.state, 'plain'];
      return <StateBadge tone={tone}>{label}</StateBadge>;
    },
  },
  { label: 'Tries', cell: (row) => row.attempts },
  { label: 'Last error', cell: (row) => row.last_error || <span className="muted">—</span> },
  {
    label: 'Latency',
    cell: (row) => (row.latency_ms === null ? '—' : `${Math.round(row.latency_ms)} ms`),
  },
  { label: 'Event time', cell: (row) => formatDateTime(row.event_time) },
];

function WebhookLog({ endpoint }: { endpoint: EventEndpoint }) {
  const queryClient = useQueryClient();
  const log = useQuery(eventDeliveriesQuery(endpoint.id));
  const test = useMutation({
    mutationFn: () => sendTestEvent(endpoint.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: eventKeys.deliveries(endpoint.id) }),
  });
  return (
    <div className="page-section" aria-label={`Webhook ${endpoint.url}`}>
      <p>
        <span className="mono wrap">{endpoint.url}</span>{' '}
        <button
          type="button"
          className="button button--quiet"
          disabled={test.isPending}
          onClick={() => test.mutate()}
        >
          Send a test event
        </button>
      </p>
      <Loaded query={log} what="the webhook's deliveries">
        {(rows) => (
          <DataTable
            columns={COLUMNS}
            rows={rows}
            rowKey={(row) => row.id}
            caption={`Deliveries to ${endpoint.url}, newest first`}
            captionHidden
          />
        )}
      </Loaded>
    </div>
  );
}
