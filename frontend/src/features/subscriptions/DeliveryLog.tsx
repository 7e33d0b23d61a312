import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';

import { deliveriesQuery, DELIVERY_REFRESH_MS } from '../../lib/api/subscriptions/deliveries';
import type { DeliveryState, SubscriptionDelivery } from '../../lib/api/types';
import { CursorPager } from '../../components/CursorPager';
import { DataTable, type Column } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { StateBadge, type Tone } from '../../components/StateBadge';
import { EmptyState } from '../../components/StatusMessage';
import { formatDateTime } from '../../lib/format';

/** Every granule delivered for a subscription, newest first, refreshed while the page is open. */
export function DeliveryLog({ subscriptionId }: { subscriptionId: number }) {
  const [cursor, setCursor] = useState<string | null>(null);
  const deliveries = useQuery(deliveriesQuery(subscriptionId, cursor));
  return (
    <section className="page-section" aria-labelledby="delivery-log-heading">
      <h2 id="delivery-log-heading">Delivery log</h2>
      <Loaded query={deliveries} what="the delivery log">
        {(page) => (
          <>
            {page.results.length === 0 && !cursor ? (
              <EmptyState title="Nothing delivered yet">
                <p>Granules appear here as soon as matching ones are archived.</p>
              </EmptyState>
            ) : (
              <DeliveryTable rows={page.results} />
            )}
            <CursorPager page={page} label="Delivery log pages" onCursor={setCursor} />
          </>
        )}
      </Loaded>
      <p className="hint">The log refreshes every {DELIVERY_REFRESH_MS / 1000} seconds.</p>
    </section>
  );
}

const STATES: Record<DeliveryState, [string, Tone]> = {
  pending: ['Pending', 'plain'],
  delivered: ['Delivered', 'ok'],
  failed: ['Failed', 'bad'],
};

function DeliveryStateBadge({ state }: { state: DeliveryState }) {
  const [label, tone] = STATES[state] ?? [state, 'plain'];
  return <StateBadge tone={tone}>{label}</StateBadge>;
}

const COLUMNS: Column<SubscriptionDelivery>[] = [
  {
    label: 'Granule',
    rowHeader: true,
    cell: (row) => (
      <Link to={`/granules/${row.granule_pk}`} className="mono wrap">
        {row.granule}
      </Link>
    ),
  },
  { label: 'State', cell: (row) => <DeliveryStateBadge state={row.state} /> },
  {
    label: 'What happened',
    cell: (row) => (
      <>
        {row.detail || <span className="muted">—</span>}
        {row.attempts > 1 && <span className="muted small"> ({row.attempts} attempts)</span>}
      </>
    ),
  },
  { label: 'Matched', cell: (row) => formatDateTime(row.created_at) },
  { label: 'Delivered', cell: (row) => formatDateTime(row.delivered_at) },
];

function DeliveryTable({ rows }: { rows: SubscriptionDelivery[] }) {
  return (
    <DataTable
      columns={COLUMNS}
      rows={rows}
      rowKey={(row) => row.id}
      caption="Deliveries, newest first"
      captionHidden
    />
  );
}
