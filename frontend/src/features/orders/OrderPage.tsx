import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';

import { orderKeys } from '../../lib/api/orders/keys';
import { orderLinksQuery } from '../../lib/api/orders/links';
import { cancelOrder, orderQuery, scriptUrl } from '../../lib/api/orders/order';
import { FINAL_STATES } from '../../lib/api/orders/orders';
import type { DownloadLink, OrderDetail, OrderItem } from '../../lib/api/types';
import { Facts } from '../../components/Facts';
import { type Column, DataTable } from '../../components/DataTable';
import { checksumColumn, sizeColumn } from '../../components/fileColumns';
import { LoadedPage } from '../../components/LoadedPage';
import { RequireLogin } from '../../components/RequireLogin';
import { ErrorMessage } from '../../components/StatusMessage';
import { formatBytes, formatDateTime, formatEta } from '../../lib/format';
import { ItemStateBadge, OrderStateBadge } from './OrderStates';
import './orders.css';

export function OrderPage() {
  const { id = '' } = useParams();
  const orderId = Number(id);
  return (
    <RequireLogin title={`Order ${id}`} why="to see your orders">
      {() =>
        Number.isInteger(orderId) && orderId > 0 ? (
          <OrderView id={orderId} />
        ) : (
          <section className="page">
            <h1>Order not found</h1>
            <p>“{id}” is not an order number.</p>
          </section>
        )
      }
    </RequireLogin>
  );
}

const LINKLESS = ['cancelled', 'expired'];

function OrderView({ id }: { id: number }) {
  const order = useQuery(orderQuery(id));
  const back = (
    <p className="breadcrumb">
      <Link to="/orders">← My orders</Link>
    </p>
  );
  return (
    <LoadedPage query={order} title={`Order ${id}`} what={`order ${id}`} back={back}>
      {(data) => (
        <OrderBody
          order={data}
          refreshError={order.isError ? order.error.message : null}
          back={back}
        />
      )}
    </LoadedPage>
  );
}

function OrderBody({
  order: data,
  refreshError,
  back,
}: {
  order: OrderDetail;
  refreshError: string | null;
  back: ReactNode;
}) {
  const ready = data.counts.ready;
  const links = useQuery(
    orderLinksQuery(
      data.id,
      ready,
      ready > 0 && data.delivery === 'https' && !LINKLESS.includes(data.state),
    ),
  );
  const byItem = new Map((links.data?.links ?? []).map((link) => [link.item, link]));
  return (
    <section className="page order-page" aria-labelledby="order-heading">
      {back}
      <div className="page__header page__header--actions">
        <div>
          <h1 id="order-heading" className="order-page__title">
            Order {data.id} <OrderStateBadge state={data.state} label={data.state_label} />
          </h1>
          <p className="page__lead" role="status">
            {progress(data)}
          </p>
        </div>
        <OrderActions order={data} />
      </div>

      {refreshError && (
        <p className="notice notice--error" role="alert">
          Could not refresh the order; showing what was last known. {refreshError}
        </p>
      )}
      {data.error && <p className="notice notice--error">{data.error}</p>}
      {links.isError && (
        <p className="notice notice--error" role="alert">
          Could not load the download links: {links.error.message}
        </p>
      )}

      <Facts
        className="figures order-page__figures"
        facts={[
          ['Placed', formatDateTime(data.created_at)],
          ['Delivery', data.delivery === 'https' ? 'HTTPS download' : 'Push to a destination'],
          ['Size', formatBytes(data.total_bytes)],
          ['Files', data.items.length],
          [
            'Links valid until',
            data.expires_at ? formatDateTime(data.expires_at) : 'starts when ready',
          ],
        ]}
      />

      <section className="page-section" aria-labelledby="items-heading">
        <h2 id="items-heading">Files</h2>
        <DataTable
          columns={itemColumns(data, byItem)}
          rows={data.items}
          rowKey={(item) => item.id}
          caption={`Files of order ${data.id} and their state`}
          captionHidden
        />
      </section>
    </section>
  );
}

/** One sentence on how far the order has got, read out when it changes. */
function progress(order: OrderDetail): string {
  const total = order.items.length;
  const { ready, waiting, failed } = order.counts;
  const parts = [`${ready} of ${total} ${total === 1 ? 'file' : 'files'} ready`];
  const later = order.items.filter((i) => i.next_part).length;
  if (waiting > later) {
    const etas = order.items
      .filter((i) => i.state === 'waiting' && !i.next_part && i.eta_s !== null)
      .map((i) => i.eta_s ?? 0);
    const eta = etas.length ? `, ready in ${formatEta(Math.max(...etas))}` : '';
    parts.push(`${waiting - later} waiting for tape${eta}`);
  }
  if (later) {
    const deliver = order.delivery === 'push' ? 'copied' : 'downloaded';
    parts.push(
      `staged in parts: ${later} more ${later === 1 ? 'file is' : 'files are'} recalled as ` +
        `the ready ones are ${deliver} (the order is larger than its share of the cache)`,
    );
  }
  if (failed) parts.push(`${failed} failed`);
  if (order.state === 'submitted')
    return `Submitted: the archive is looking up where the ${total === 1 ? 'file is' : `${total} files are`}.`;
  if (order.state === 'cancelled') return `Cancelled. ${parts[0]} when it was cancelled.`;
  if (order.state === 'expired')
    return 'Expired: its links no longer work. Order the granules again to get them.';
  if (order.state === 'completed')
    return failed
      ? `${order.state_label} in part: ${total - failed} of ${total} files delivered, ` +
          `${failed} failed (each file says why below).`
      : `${order.state_label}: every file was delivered.`;
  return `${parts.join('; ')}.`;
}

function OrderActions({ order }: { order: OrderDetail }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const cancel = useMutation({
    mutationFn: () => cancelOrder(order.id),
    onSuccess: async () => {
      setConfirming(false);
      await queryClient.invalidateQueries({ queryKey: orderKeys.all });
    },
  });
  const final = FINAL_STATES.includes(order.state);
  const scriptable =
    order.delivery === 'https' && order.counts.ready > 0 && !LINKLESS.includes(order.state);
  return (
    <div className="order-page__actions">
      <div className="actions">
        {scriptable && (
          <a
            className="button button--quiet"
            href={scriptUrl(order.id)}
            download={`granary-order-${order.id}.py`}
            title="Python 3: resumes, retries, checks every checksum and lists what failed. Run it again to resume."
          >
            Download script
          </a>
        )}
        {!final && !confirming && (
          <button
            type="button"
            className="button button--quiet"
            onClick={() => setConfirming(true)}
          >
            Cancel order
          </button>
        )}
      </div>
      {confirming && !final && (
        <div className="order-page__confirm" role="group" aria-label="Confirm cancelling">
          <p>
            Cancel order {order.id}? Its links stop working and waiting files are no longer
            recalled.
          </p>
          <div className="actions">
            <button
              type="button"
              className="button"
              onClick={() => cancel.mutate()}
              disabled={cancel.isPending}
            >
              {cancel.isPending ? 'Cancelling…' : 'Yes, cancel it'}
            </button>
            <button
              type="button"
              className="button button--quiet"
              onClick={() => setConfirming(false)}
            >
              Keep it
            </button>
          </div>
        </div>
      )}
      {cancel.isError && (
        <ErrorMessage title="The order was not cancelled" detail={cancel.error.message} />
      )}
    </div>
  );
}

function itemColumns(order: OrderDetail, links: Map<number, DownloadLink>): Column<OrderItem>[] {
  return [
    {
      label: 'File',
      rowHeader: true,
      cell: (item) => {
        const [collection, granuleId] = splitGranule(item.granule);
        return (
          <span className="granule-cell">
            <span className="mono wrap">{item.name}</span>
            <span className="muted small wrap">
              <Link to={`/granules/${item.granule_pk}`}>{granuleId}</Link> · {collection}
            </span>
          </span>
        );
      },
    },
    sizeColumn((item) => item.size),
    checksumColumn((item) => ({
      type: item.checksum_type,
      value: item.checksum,
      fileId: item.file_id,
    })),
    {
      label: 'State',
      cell: (item) => (
        <span className="item-state">
          <ItemStateBadge state={item.state} label={item.state_label} />
          <ItemDetail item={item} order={order} />
        </span>
      ),
    },
    {
      label: 'Download',
      cell: (item) => {
        const url = links.get(item.id)?.url;
        return url ? (
          <a href={url} download={item.name} aria-label={`Download ${item.name}`}>
            Download
          </a>
        ) : (
          <span className="muted">—</span>
        );
      },
    },
  ];
}

function ItemDetail({ item, order }: { item: OrderItem; order: OrderDetail }) {
  if (item.next_part) {
    return (
      <span className="small">
        Next part: recalled once the ready files are{' '}
        {order.delivery === 'push' ? 'copied' : 'downloaded'}
      </span>
    );
  }
  if (item.state === 'waiting') {
    // Until the archive first answers, an item cannot tell cache from tape.
    if (order.state === 'submitted' || item.residency === 'cache')
      return <span className="small">Being prepared</span>;
    const eta = formatEta(item.eta_s);
    return <span className="small">Waiting for tape{eta ? `, ready in ${eta}` : ''}</span>;
  }
  if (item.state === 'failed') return <span className="small bad">{item.error || 'Failed'}</span>;
  // cut to nothing by the order's subset: an outcome, with the reason
  if (item.state === 'empty') return <span className="small">{item.error}</span>;
  if (item.state === 'ready' && order.delivery === 'push') {
    return (
      <span className="small">
        {item.pushed_at ? `Copied ${formatDateTime(item.pushed_at)}` : 'Being copied'}
      </span>
    );
  }
  if (item.downloaded_at)
    return <span className="small muted">Downloaded {formatDateTime(item.downloaded_at)}</span>;
  return null;
}

function splitGranule(text: string): [string, string] {
  const at = text.indexOf(':');
  return at < 0 ? ['', text] : [text.slice(0, at), text.slice(at + 1)];
}
