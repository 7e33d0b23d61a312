import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';

import { deliveriesQuery, DELIVERY_REFRESH_MS } from '../../api/subscriptions/deliveries';
import type { DeliveryState, SubscriptionDelivery } from '../../api/types';
import { CursorPager } from '../../components/CursorPager';
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

function DeliveryTable({ rows }: { rows: SubscriptionDelivery[] }) {
  return (
    <div className="table-card">
      <table className="data-table data-table--cards">
        <caption className="visually-hidden">Deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Granule</th>
            <th scope="col">State</th>
            <th scope="col">What happened</th>
            <th scope="col">Matched</th>
            <th scope="col">Delivered</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <th scope="row" data-label="Granule">
                <Link to={`/granules/${row.granule_pk}`} className="mono wrap">
                  {row.granule}
                </Link>
              </th>
              <td data-label="State">
                <DeliveryStateBadge state={row.state} />
              </td>
              <td data-label="What happened">
                {row.detail || <span className="muted">—</span>}
                {row.attempts > 1 && <span className="muted small"> ({row.attempts} attempts)</span>}
              </td>
              <td data-label="Matched">{formatDateTime(row.created_at)}</td>
              <td data-label="Delivered">{formatDateTime(row.delivered_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
