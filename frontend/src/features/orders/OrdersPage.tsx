import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';

import { ordersQuery } from '../../api/orders/orders';
import type { Order } from '../../api/types';
import { LinkPager } from '../../components/LinkPager';
import { RequireLogin } from '../../components/RequireLogin';
import { EmptyState, ErrorMessage, Loading } from '../../components/StatusMessage';
import { formatBytes, formatDateTime } from '../../lib/format';
import { OrderStateBadge } from './OrderStates';
import './orders.css';

export function OrdersPage() {
  return (
    <RequireLogin title="My orders" why="to see your orders">
      {() => <OrdersList />}
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
          Orders waiting for tape update here on their own. Ready files can be downloaded until the links expire.
        </p>
      </div>
      {orders.isPending ? (
        <Loading>Loading your orders…</Loading>
      ) : orders.isError && !orders.data ? (
        <ErrorMessage title="Could not load your orders" detail={orders.error.message} onRetry={() => void orders.refetch()} />
      ) : orders.data.results.length === 0 ? (
        <EmptyState title="No orders yet">
          <p>
            <Link to="/search">Search for granules</Link>, put them in the cart and order them.
          </p>
        </EmptyState>
      ) : (
        <>
          <div className="table-card">
            <table className="data-table data-table--cards">
              <caption className="visually-hidden">Your orders, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Order</th>
                  <th scope="col">Placed</th>
                  <th scope="col">State</th>
                  <th scope="col">Files</th>
                  <th scope="col" className="numeric">
                    Size
                  </th>
                  <th scope="col">Delivery</th>
                </tr>
              </thead>
              <tbody>
                {orders.data.results.map((order) => (
                  <OrderRow key={order.id} order={order} />
                ))}
              </tbody>
            </table>
          </div>
          <LinkPager
            label="Order pages"
            next={orders.data.next}
            previous={orders.data.previous}
            to={(cursor) => ({ pathname: '/orders', search: cursor ? `?cursor=${encodeURIComponent(cursor)}` : '' })}
            back="← Newer"
            forward="Older →"
          />
        </>
      )}
    </section>
  );
}

function OrderRow({ order }: { order: Order }) {
  const { ready, waiting, failed } = order.counts;
  const files = [ready && `${ready} ready`, waiting && `${waiting} waiting`, failed && `${failed} failed`]
    .filter(Boolean)
    .join(', ');
  return (
    <tr>
      <th scope="row" data-label="Order">
        <Link to={`/orders/${order.id}`}>
          Order {order.id}
          {order.subscription !== null && <span className="muted"> (subscription)</span>}
        </Link>
      </th>
      <td data-label="Placed">{formatDateTime(order.created_at)}</td>
      <td data-label="State">
        <OrderStateBadge state={order.state} />
      </td>
      <td data-label="Files">{files || '—'}</td>
      <td data-label="Size" className="numeric">
        {formatBytes(order.total_bytes)}
      </td>
      <td data-label="Delivery">{order.delivery === 'https' ? 'HTTPS' : 'Push'}</td>
    </tr>
  );
}
