import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';

import { ordersQuery } from '../../lib/api/orders/orders';
import type { Order } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { LinkPager } from '../../components/LinkPager';
import { RequireLogin } from '../../components/RequireLogin';
import { EmptyState, ErrorMessage, Loading } from '../../components/StatusMessage';
import { formatBytes, formatDateTime } from '../../lib/format';
import { OrderStateBadge } from './OrderStates';
import { StageRequests } from './StageRequests';
import './orders.css';

export function OrdersPage() {
  return (
    <RequireLogin title="My orders" why="to see your orders">
      {(me) => (
        <>
          <OrdersList />
          <StageRequests operator={me.role === 'operator'} />
        </>
      )}
    </RequireLogin>
  );
}

function OrdersList() {
  const [params] = useSearchParams();
  const cursor = params.get('cursor');
  const orders = useQuery(ordersQuery(cursor));
  return (
    <section className="page" aria-labelledby="orders-heading">
      <div className="page__header">
        <h1 id="orders-heading">My orders</h1>
        <p className="page__lead">
          Orders waiting for tape update here on their own. Ready files can be downloaded until the
          links expire.
        </p>
      </div>
      {orders.isPending ? (
        <Loading>Loading your orders…</Loading>
      ) : orders.isError && !orders.data ? (
        <ErrorMessage
          title="Could not load your orders"
          detail={orders.error.message}
          error={orders.error}
          onRetry={() => void orders.refetch()}
        />
      ) : orders.data.results.length === 0 ? (
        <EmptyState title="No orders yet">
          <p>
            <Link to="/search">Search for granules</Link>, put them in the cart and order them.
          </p>
        </EmptyState>
      ) : (
        <>
          <DataTable
            columns={COLUMNS}
            rows={orders.data.results}
            rowKey={(order) => order.id}
            caption="Your orders, newest first"
            captionHidden
          />
          <LinkPager
            label="Order pages"
            next={orders.data.next}
            previous={orders.data.previous}
            to={(cursor) => ({
              pathname: '/orders',
              search: cursor ? `?cursor=${encodeURIComponent(cursor)}` : '',
            })}
            back="← Newer"
            forward="Older →"
          />
        </>
      )}
    </section>
  );
}

/** "2 ready, 1 waiting (staged in parts)": the files of an order by state, leaving out the states none is in. */
function fileCounts(order: Order): string {
  const { ready, waiting, failed } = order.counts;
  const files = [
    ready && `${ready} ready`,
    waiting && `${waiting} waiting${order.in_parts ? ' (staged in parts)' : ''}`,
    failed && `${failed} failed`,
  ];
  return files.filter(Boolean).join(', ');
}

const COLUMNS: Column<Order>[] = [
  {
    label: 'Order',
    rowHeader: true,
    cell: (order) => (
      <Link to={`/orders/${order.id}`}>
        Order {order.id}
        {order.subscription !== null && <span className="muted"> (subscription)</span>}
      </Link>
    ),
  },
  { label: 'Placed', cell: (order) => formatDateTime(order.created_at) },
  {
    label: 'State',
    cell: (order) => <OrderStateBadge state={order.state} label={order.state_label} />,
  },
  { label: 'Files', cell: (order) => fileCounts(order) || '—' },
  { label: 'Size', numeric: true, cell: (order) => formatBytes(order.total_bytes) },
  { label: 'Delivery', cell: (order) => (order.delivery === 'https' ? 'HTTPS' : 'Push') },
];
