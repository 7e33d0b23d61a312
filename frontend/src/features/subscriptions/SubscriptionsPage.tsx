import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';

import { cursorOf } from '../../api/client';
import { MODE_LABELS, subscriptionsQuery } from '../../api/subscriptions/subscriptions';
import type { Subscription } from '../../api/types';
import { RequireLogin } from '../../components/RequireLogin';
import { StateBadge } from '../../components/StateBadge';
import { EmptyState, ErrorMessage, Loading } from '../../components/StatusMessage';
import { describe } from './filterForm';
import { useSetActive } from './useSetActive';
import './subscriptions.css';

export function SubscriptionsPage() {
  return (
    <RequireLogin title="Subscriptions" why="to keep subscriptions">
      {() => <SubscriptionList />}
    </RequireLogin>
  );
}

function SubscriptionList() {
  const [searchParams] = useSearchParams();
  const cursor = searchParams.get('cursor');
  const subscriptions = useQuery(subscriptionsQuery(cursor));
  const setActive = useSetActive();

  return (
    <section className="page" aria-labelledby="subscriptions-heading">
      <div className="page__header page__header--actions">
        <div>
          <h1 id="subscriptions-heading">Subscriptions</h1>
          <p className="page__lead">
            Standing searches: granules that match are delivered to you once each, as soon as they are archived.
          </p>
        </div>
        <Link className="button" to="/subscriptions/new">
          New subscription
        </Link>
      </div>
      {setActive.isError && (
        <p className="notice notice--error" role="alert">
          {setActive.error.message}
        </p>
      )}
      {subscriptions.isPending && <Loading>Loading your subscriptions…</Loading>}
      {subscriptions.isError && (
        <ErrorMessage title="Could not load your subscriptions" detail={subscriptions.error.message} onRetry={() => void subscriptions.refetch()} />
      )}
      {subscriptions.data &&
        (subscriptions.data.results.length === 0 && !cursor ? (
          <EmptyState title="No subscriptions yet">
            <p>
              <Link to="/subscriptions/new">Create one</Link> to have new granules of a collection, place and time
              delivered as they arrive.
            </p>
          </EmptyState>
        ) : (
          <div className="table-card">
            <table className="data-table data-table--cards">
              <caption>Your subscriptions</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Collections</th>
                  <th scope="col">Filter</th>
                  <th scope="col">Delivery</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {subscriptions.data.results.map((subscription) => (
                  <SubscriptionRow
                    key={subscription.id}
                    subscription={subscription}
                    busy={setActive.isPending}
                    onToggle={() => setActive.mutate({ subscription, active: !subscription.active })}
                  />
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {subscriptions.data && (subscriptions.data.next || subscriptions.data.previous) && (
        <nav className="pager" aria-label="Subscription pages">
          {subscriptions.data.previous ? <PageLink link={subscriptions.data.previous} rel="prev" /> : <span />}
          {subscriptions.data.next && <PageLink link={subscriptions.data.next} rel="next" />}
        </nav>
      )}
    </section>
  );
}

function PageLink({ link, rel }: { link: string; rel: 'prev' | 'next' }) {
  const cursor = cursorOf(link);
  return (
    <Link className="button button--quiet" to={cursor ? `?cursor=${encodeURIComponent(cursor)}` : '.'} rel={rel}>
      {rel === 'prev' ? '← Newer' : 'Older →'}
    </Link>
  );
}

function SubscriptionRow({ subscription, busy, onToggle }: { subscription: Subscription; busy: boolean; onToggle: () => void }) {
  const { area, window, conditions } = describe(subscription);
  const verb = subscription.active ? 'Pause' : 'Resume';
  return (
    <tr>
      <th scope="row" data-label="Name">
        <Link to={`/subscriptions/${subscription.id}`}>{subscription.name}</Link>
      </th>
      <td data-label="Collections">
        <span className="mono wrap">{subscription.collections.join(', ')}</span>
      </td>
      <td data-label="Filter">
        <span className="filter-lines">
          <span>{area}</span>
          <span>{window}</span>
          {subscription.conditions.length > 0 && <span>{conditions}</span>}
        </span>
      </td>
      <td data-label="Delivery">{MODE_LABELS[subscription.mode]}</td>
      <td data-label="State">
        <ActiveBadge active={subscription.active} />
      </td>
      <td data-label="Actions">
        <button
          type="button"
          className="button button--small button--quiet"
          disabled={busy}
          onClick={onToggle}
          aria-label={`${verb} ${subscription.name}`}
        >
          {verb}
        </button>
      </td>
    </tr>
  );
}

export function ActiveBadge({ active }: { active: boolean }) {
  return <StateBadge tone={active ? 'ok' : 'plain'}>{active ? 'Active' : 'Paused'}</StateBadge>;
}
