import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';

import { cursorOf } from '../../lib/api/client';
import { MODE_LABELS, subscriptionsQuery } from '../../lib/api/subscriptions/subscriptions';
import type { Subscription } from '../../lib/api/types';
import { DataTable, type Column } from '../../components/DataTable';
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
            Standing searches: granules that match are delivered to you once each, as soon as they
            are archived.
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
        <ErrorMessage
          title="Could not load your subscriptions"
          detail={subscriptions.error.message}
          error={subscriptions.error}
          onRetry={() => void subscriptions.refetch()}
        />
      )}
      {subscriptions.data &&
        (subscriptions.data.results.length === 0 && !cursor ? (
          <EmptyState title="No subscriptions yet">
            <p>
              <Link to="/subscriptions/new">Create one</Link> to have new granules of a collection,
              place and time delivered as they arrive.
            </p>
          </EmptyState>
        ) : (
          <DataTable
            columns={subscriptionColumns(setActive.isPending, (subscription) =>
              setActive.mutate({ subscription, active: !subscription.active }),
            )}
            rows={subscriptions.data.results}
            rowKey={(subscription) => subscription.id}
            caption="Your subscriptions"
          />
        ))}
      {subscriptions.data && (subscriptions.data.next || subscriptions.data.previous) && (
        <nav className="pager" aria-label="Subscription pages">
          {subscriptions.data.previous ? (
            <PageLink link={subscriptions.data.previous} rel="prev" />
          ) : (
            <span />
          )}
          {subscriptions.data.next && <PageLink link={subscriptions.data.next} rel="next" />}
        </nav>
      )}
    </section>
  );
}

function PageLink({ link, rel }: { link: string; rel: 'prev' | 'next' }) {
  const cursor = cursorOf(link);
  return (
    <Link
      className="button button--quiet"
      to={cursor ? `?cursor=${encodeURIComponent(cursor)}` : '.'}
      rel={rel}
    >
      {rel === 'prev' ? '← Newer' : 'Older →'}
    </Link>
  );
}

function subscriptionColumns(
  busy: boolean,
  onToggle: (subscription: Subscription) => void,
): Column<Subscription>[] {
  return [
    {
      label: 'Name',
      rowHeader: true,
      cell: (subscription) => (
        <Link to={`/subscriptions/${subscription.id}`}>{subscription.name}</Link>
      ),
    },
    {
      label: 'Collections',
      cell: (subscription) => (
        <span className="mono wrap">{subscription.collections.join(', ')}</span>
      ),
    },
    {
      label: 'Filter',
      cell: (subscription) => {
        const { area, window, conditions } = describe(subscription);
        return (
          <span className="filter-lines">
            <span>{area}</span>
            <span>{window}</span>
            {subscription.conditions.length > 0 && <span>{conditions}</span>}
          </span>
        );
      },
    },
    { label: 'Delivery', cell: (subscription) => MODE_LABELS[subscription.mode] },
    { label: 'State', cell: (subscription) => <ActiveBadge active={subscription.active} /> },
    {
      label: 'Actions',
      header: 'hidden',
      cell: (subscription) => {
        const verb = subscription.active ? 'Pause' : 'Resume';
        return (
          <button
            type="button"
            className="button button--small button--quiet"
            disabled={busy}
            onClick={() => onToggle(subscription)}
            aria-label={`${verb} ${subscription.name}`}
          >
            {verb}
          </button>
        );
      },
    },
  ];
}

export function ActiveBadge({ active }: { active: boolean }) {
  return <StateBadge tone={active ? 'ok' : 'plain'}>{active ? 'Active' : 'Paused'}</StateBadge>;
}
