import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';

import { cartQuery } from '../../lib/api/cart/cart';
import { subsetEstimateQuery } from '../../lib/api/cart/subset';
import { cartKeys } from '../../lib/api/cart/keys';
import { orderKeys } from '../../lib/api/orders/keys';
import { orderCart } from '../../lib/api/orders/orders';
import type {
  Cart,
  CartGranule,
  Delivery,
  OrderLimits,
  WithdrawnCartGranule,
} from '../../lib/api/types';
import { DataTable, type Column } from '../../components/DataTable';
import { Facts } from '../../components/Facts';
import { GranuleName } from '../../components/GranuleName';
import { ResidencyBadge } from '../../components/ResidencyBadge';
import { RequireLogin } from '../../components/RequireLogin';
import { EmptyState, ErrorMessage, Loading } from '../../components/StatusMessage';
import { cartChanges, useCartChange } from '../../components/cart/useCart';
import { DestinationPicker } from '../../components/destinations/DestinationPicker';
import {
  NO_SUBSET,
  SubsetChoices,
  subsetOptions,
  type SubsetDraft,
} from '../../components/subset/SubsetChoices';
import { formatBytes, formatCount, formatDateTime, formatEta, formatUtc } from '../../lib/format';
import { lastSearchArea } from '../../lib/searchArea';
import { useDebounced } from '../../lib/useDebounced';
import '../../components/portal.css';
import './cart.css';

export function CartPage() {
  return (
    <RequireLogin title="Cart" why="to keep a cart and order granules">
      {() => <CartView />}
    </RequireLogin>
  );
}

function CartView() {
  const cart = useQuery(cartQuery());
  return (
    <section className="page cart-page" aria-labelledby="cart-heading">
      <div className="page__header">
        <h1 id="cart-heading">Cart</h1>
        <p className="page__lead">
          Granules set aside to order. An order brings files back from tape when it needs to and
          tells you when they are ready.
        </p>
      </div>
      {cart.isPending ? (
        <Loading>Loading the cart…</Loading>
      ) : cart.isError ? (
        <ErrorMessage
          title="Could not load the cart"
          detail={cart.error.message}
          error={cart.error}
          onRetry={() => void cart.refetch()}
        />
      ) : cart.data.count === 0 ? (
        <>
          <Withdrawn items={cart.data.withdrawn} />
          <EmptyState title="The cart is empty">
            <p>
              <Link to="/search">Search for granules</Link> and add them here.
            </p>
          </EmptyState>
        </>
      ) : (
        <>
          <Withdrawn items={cart.data.withdrawn} />
          <CartTable cart={cart.data} />
          <div className="cart-page__checkout">
            <LimitsBox cart={cart.data} />
            <Checkout cart={cart.data} />
          </div>
        </>
      )}
    </section>
  );
}

function CartTable({ cart }: { cart: Cart }) {
  const remove = useCartChange(cartChanges.remove);
  const clear = useCartChange(cartChanges.clear);
  const failed = remove.error ?? clear.error;
  const columns: Column<CartGranule>[] = [
    {
      label: 'Granule',
      rowHeader: true,
      cell: (item) => (
        <span className="granule-cell">
          <Link to={`/granules/${item.granule}`} className="mono wrap-tokens">
            <GranuleName name={item.granule_id} />
          </Link>
          <span className="muted small">{item.collection}</span>
        </span>
      ),
    },
    { label: 'Size', numeric: true, cell: (item) => formatBytes(item.size) },
    { label: 'Where', cell: (item) => <Whereabouts item={item} /> },
    { label: 'Added', cell: (item) => formatDateTime(item.added_at) },
    {
      label: 'Remove',
      header: 'hidden',
      cell: (item) => (
        <button
          type="button"
          className="button button--small button--quiet"
          onClick={() => remove.mutate(item.granule)}
          disabled={remove.isPending}
          aria-label={`Remove ${item.granule_id} from the cart`}
        >
          Remove
        </button>
      ),
    },
  ];
  return (
    <>
      {failed && <ErrorMessage title="The cart was not changed" detail={failed.message} />}
      <DataTable
        columns={columns}
        rows={cart.granules}
        rowKey={(item) => item.granule}
        caption="Granules in the cart"
        captionHidden
        footer={
          <tr className="total">
            <th scope="row">
              {formatCount(cart.count)} {cart.count === 1 ? 'granule' : 'granules'}
            </th>
            <td className="numeric">{formatBytes(cart.bytes)}</td>
            <td colSpan={3}>
              <button
                type="button"
                className="button button--small button--quiet"
                onClick={() => clear.mutate(undefined)}
                disabled={clear.isPending}
              >
                Empty the cart
              </button>
            </td>
          </tr>
        }
      />
    </>
  );
}

/**
 * Granules withdrawn (or deleted) by an operator since they were put in the cart: listed with
 * when and why, left out of the order, until the reader removes them.
 */
function Withdrawn({ items }: { items: WithdrawnCartGranule[] }) {
  const remove = useCartChange(cartChanges.remove);
  if (items.length === 0) return null;
  return (
    <section className="notice notice--error cart-withdrawn" aria-labelledby="withdrawn-heading">
      <h2 id="withdrawn-heading">
        {items.length === 1
          ? 'A granule in your cart was withdrawn'
          : `${formatCount(items.length)} granules in your cart were withdrawn`}
      </h2>
      <p>{items.length === 1 ? 'It is' : 'They are'} not ordered with the cart.</p>
      <ul>
        {items.map((item) => (
          <li key={item.granule}>
            <span className="mono">{item.granule_id}</span>: {item.state} on {formatUtc(item.at)}.{' '}
            <span className="muted">{item.reason}</span>{' '}
            <button
              type="button"
              className="button button--small button--quiet"
              onClick={() => remove.mutate(item.granule)}
              disabled={remove.isPending}
              aria-label={`Remove the withdrawn ${item.granule_id} from the cart`}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** In the disk cache (ready at once) or on tape, with the recall estimate when there is one. */
function Whereabouts({ item }: { item: CartGranule }) {
  if (item.in_cache) return <ResidencyBadge residency="cache" />;
  return (
    <span className="granule-cell">
      <ResidencyBadge residency="tape" />
      <span className="muted small">
        {item.eta_s === null ? 'recall time unknown' : `recall ${formatEta(item.eta_s)}`}
      </span>
    </span>
  );
}

/**
 * How long before the whole cart would be ready if ordered now. Each estimate is for a recall
 * on its own; recalls share the drives, so the longest one is a floor, not a promise.
 */
function readiness(cart: Cart): string {
  const onTape = cart.granules.filter((item) => !item.in_cache);
  if (onTape.length === 0) return 'Ready at once: every granule is in the disk cache';
  const known = onTape.flatMap((item) => (item.eta_s === null ? [] : [item.eta_s]));
  const count = `${formatCount(onTape.length)} of ${formatCount(cart.count)} on tape`;
  if (known.length === 0) return `${count}; the recall time cannot be estimated now`;
  const unknown = onTape.length - known.length;
  return `${count}; recall ${formatEta(Math.max(...known))} or more${
    unknown ? ` (${formatCount(unknown)} cannot be estimated now)` : ''
  }`;
}

/** What is over a limit, said before ordering; the API has the last word when ordering. */
function overLimits(cart: Cart, limits: OrderLimits): string[] {
  const over: string[] = [];
  if (cart.count > limits.granules) {
    over.push(
      `The cart holds ${formatCount(cart.count)} granules; one order may hold ${formatCount(limits.granules)}.`,
    );
  }
  if (cart.bytes > limits.bytes) {
    over.push(
      `The cart holds ${formatBytes(cart.bytes)}; one order may hold ${formatBytes(limits.bytes)}.`,
    );
  }
  if (limits.open_orders_used >= limits.open_orders) {
    over.push(
      `You have ${limits.open_orders_used} open orders, the most allowed: wait for one to finish or cancel one.`,
    );
  }
  return over;
}

function LimitsBox({ cart }: { cart: Cart }) {
  const { limits } = cart;
  const over = overLimits(cart, limits);
  return (
    <section className="cart-page__box" aria-labelledby="limits-heading">
      <h2 id="limits-heading">Before you order</h2>
      <Facts
        facts={[
          ['Total size', formatBytes(cart.bytes)],
          ['Ready', readiness(cart)],
          [
            'Granules',
            <>
              {formatCount(cart.count)}{' '}
              <span className="muted">of {formatCount(limits.granules)} per order</span>
            </>,
          ],
          ['Size limit', `${formatBytes(limits.bytes)} per order`],
          [
            'Open orders',
            <>
              {limits.open_orders_used}{' '}
              <span className="muted">of {limits.open_orders} at once</span>
            </>,
          ],
        ]}
      />
      {over.map((line) => (
        <p key={line} className="notice notice--error">
          {line}
        </p>
      ))}
    </section>
  );
}

/** How long the subset choices stay unchanged before the API is asked for their estimate. */
const ESTIMATE_DELAY_MS = 300;

function Checkout({ cart }: { cart: Cart }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [delivery, setDelivery] = useState<Delivery>('https');
  const [destination, setDestination] = useState('');
  const [draft, setDraft] = useState<SubsetDraft>(NO_SUBSET);
  const [searchArea] = useState(lastSearchArea);
  const subset = subsetOptions(draft);
  const errorRef = useRef<HTMLDivElement>(null);

  const order = useMutation({
    mutationFn: () =>
      orderCart({
        delivery,
        destination: delivery === 'push' && destination ? Number(destination) : null,
        ...(subset ? { subset } : {}),
      }),
    onSuccess: async (placed) => {
      await queryClient.invalidateQueries({ queryKey: cartKeys.all });
      await queryClient.invalidateQueries({ queryKey: orderKeys.all });
      await navigate(`/orders/${placed.id}`);
    },
  });

  // Asked once typing pauses, not per keystroke; not while an order is placed: the cart it
  // estimates is emptied by the order.
  const settled = useDebounced(subset, ESTIMATE_DELAY_MS);
  const estimate = useQuery({
    ...subsetEstimateQuery(settled),
    enabled: !order.isPending && !order.isSuccess,
  });
  const refusal = estimate.isError ? estimate.error.message : null;

  useEffect(() => {
    if (order.isError) errorRef.current?.focus();
  }, [order.isError, order.failureCount]);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    order.mutate();
  }

  return (
    <form className="cart-page__box" onSubmit={onSubmit} aria-labelledby="checkout-heading">
      <h2 id="checkout-heading">Order</h2>
      {order.isError && (
        <div className="status status--error" role="alert" tabIndex={-1} ref={errorRef}>
          <p className="status__title">The order was not placed</p>
          <p>{order.error.message}</p>
        </div>
      )}
      <fieldset className="cart-page__delivery">
        <legend>Delivery</legend>
        <label className="check">
          <input
            type="radio"
            name="delivery"
            value="https"
            checked={delivery === 'https'}
            onChange={() => setDelivery('https')}
          />
          <span>
            HTTPS download
            <span className="hint">
              Signed links for each file and a download script, once the files are ready.
            </span>
          </span>
        </label>
        <label className="check">
          <input
            type="radio"
            name="delivery"
            value="push"
            checked={delivery === 'push'}
            onChange={() => setDelivery('push')}
          />
          <span>
            Push to a destination
            <span className="hint">
              Granary copies the files into a folder of yours under the outbox, with a manifest.
            </span>
          </span>
        </label>
      </fieldset>
      {delivery === 'push' && <DestinationPicker value={destination} onChange={setDestination} />}
      <SubsetChoices
        className="cart-page__delivery"
        draft={draft}
        onChange={setDraft}
        variables={(estimate.data?.collections ?? []).flatMap((c) => c.variables)}
        formats={estimate.data?.formats ?? []}
        cannot={(estimate.data?.collections ?? [])
          .filter((c) => !c.subsettable)
          .map((c) => c.collection)}
        searchArea={searchArea}
        status={
          <p className="cart-subset__estimate" role="status">
            {refusal ? (
              <span className="field-error">{refusal}</span>
            ) : estimate.data ? (
              `About ${formatBytes(estimate.data.estimate)} of ${formatBytes(estimate.data.bytes)} (an estimate)`
            ) : (
              'Estimating…'
            )}
          </p>
        }
      />
      <button
        type="submit"
        className="button"
        disabled={order.isPending || (draft.on && refusal !== null)}
      >
        {order.isPending
          ? 'Placing the order…'
          : `Order ${formatCount(cart.count)} ${cart.count === 1 ? 'granule' : 'granules'} (${formatBytes(
              draft.on && estimate.data?.cuts ? estimate.data.estimate : cart.bytes,
            )}${draft.on && estimate.data?.cuts ? ', estimated' : ''})`}
      </button>
    </form>
  );
}
