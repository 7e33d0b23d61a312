import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';

import { eventDeliveriesQuery } from '../../lib/api/events/deliveries';
import { eventKeys } from '../../lib/api/events/keys';
import { sendTestEvent } from '../../lib/api/events/testEvent';
import type { EventDelivery, EventDeliveryState, EventEndpoint } from '../../lib/api/types';
import { formatDateTime } from '../../lib/format';
import { DataTable, type Column } from '../DataTable';
import { Loaded } from '../Loaded';
import { StateBadge, type Tone } from '../StateBadge';

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
  { label: 'Subject', cell: (row) => <span className="mono">{row.subject}</span> },
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

/** Where an endpoint sends to, in words: its URL, the exchange, or the owner's mail. */
export function endpointTarget(endpoint: EventEndpoint) {
  if (endpoint.kind === 'email') return 'my mail';
  if (endpoint.kind === 'amqp') return `AMQP exchange ${endpoint.url}`;
  return endpoint.url ?? '';
}

/** One endpoint's delivery log (status, tries, last error, latency) and a test button. */
export function DeliveryLog({ endpoint }: { endpoint: EventEndpoint }) {
  const queryClient = useQueryClient();
  const log = useQuery(eventDeliveriesQuery(endpoint.id));
  const test = useMutation({
    mutationFn: () => sendTestEvent(endpoint.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: eventKeys.deliveries(endpoint.id) }),
  });
  const target = endpointTarget(endpoint);
  return (
    <div className="page-section" aria-label={`Webhook ${target}`}>
      <p>
        <span className="mono wrap">{target}</span>{' '}
        <button
          type="button"
          className="button button--quiet"
          disabled={test.isPending}
          onClick={() => test.mutate()}
        >
          Send a test event
        </button>
      </p>
      <Loaded query={log} what="the endpoint's deliveries">
        {(rows) => (
          <DataTable
            columns={COLUMNS}
            rows={rows}
            rowKey={(row) => row.id}
            caption={`Deliveries to ${target}, newest first`}
            captionHidden
          />
        )}
      </Loaded>
    </div>
  );
}
