import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';

import { subscriptionKeys } from '../../lib/api/subscriptions/keys';
import { deleteSubscription, subscriptionQuery } from '../../lib/api/subscriptions/subscription';
import { MODE_LABELS } from '../../lib/api/subscriptions/subscriptions';
import type { Subscription } from '../../lib/api/types';
import { RequireLogin } from '../../components/RequireLogin';
import { ErrorMessage, Loading } from '../../components/StatusMessage';
import { formatDateTime } from '../../lib/format';
import { DeliveryLog } from './DeliveryLog';
import { ActiveBadge } from './SubscriptionsPage';
import { SubscriptionWebhooks } from './SubscriptionWebhooks';
import { describe } from './filterForm';
import { useSetActive } from './useSetActive';
import './subscriptions.css';

interface Notice {
  notice?: string;
  failed?: boolean;
}

export function SubscriptionPage() {
  return (
    <RequireLogin title="Subscription" why="to see your subscriptions">
      {() => <SubscriptionDetail />}
    </RequireLogin>
  );
}

function SubscriptionDetail() {
  const id = Number(useParams().id);
  const subscription = useQuery(subscriptionQuery(id));
  if (subscription.isPending) return <Loading>Loading the subscription…</Loading>;
  if (subscription.isError) {
    return (
      <section className="page">
        <h1>Subscription</h1>
        <ErrorMessage
          title="Could not load the subscription"
          detail={subscription.error.message}
          error={subscription.error}
          onRetry={() => void subscription.refetch()}
        />
        <p>
          <Link to="/subscriptions">All your subscriptions</Link>
        </p>
      </section>
    );
  }
  return <Detail subscription={subscription.data} />;
}

function Detail({ subscription }: { subscription: Subscription }) {
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const setActive = useSetActive();
  const [confirming, setConfirming] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const deleteRef = useRef<HTMLButtonElement>(null);
  const state = (location.state ?? {}) as Notice;
  const remove = useMutation({
    mutationFn: () => deleteSubscription(subscription.id),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: subscriptionKeys.detail(subscription.id) });
      await queryClient.invalidateQueries({ queryKey: subscriptionKeys.all });
      await navigate('/subscriptions', { replace: true });
    },
  });

  useEffect(() => {
    if (confirming) confirmRef.current?.focus();
  }, [confirming]);

  function cancelDelete() {
    setConfirming(false);
    requestAnimationFrame(() => deleteRef.current?.focus());
  }

  const { area, window, conditions } = describe(subscription);
  const error = setActive.error ?? remove.error;
  return (
    <section className="page" aria-labelledby="subscription-heading">
      <p className="breadcrumb">
        <Link to="/subscriptions">Subscriptions</Link> /
      </p>
      <div className="page__header page__header--actions">
        <div>
          <h1 id="subscription-heading">
            {subscription.name} <ActiveBadge active={subscription.active} />
          </h1>
          <p className="page__lead">Created {formatDateTime(subscription.created_at)}.</p>
        </div>
        <div className="actions">
          <Link className="button button--quiet" to={`/subscriptions/${subscription.id}/edit`}>
            Edit
          </Link>
          <button
            type="button"
            className="button button--quiet"
            disabled={setActive.isPending}
            onClick={() => setActive.mutate({ subscription, active: !subscription.active })}
          >
            {subscription.active ? 'Pause' : 'Resume'}
          </button>
          <button
            type="button"
            ref={deleteRef}
            className="button button--quiet"
            onClick={() => setConfirming(true)}
            disabled={confirming}
          >
            Delete
          </button>
        </div>
      </div>

      <div aria-live="polite">
        {state.notice && (
          <p className={state.failed ? 'notice notice--error' : 'notice notice--ok'}>
            {state.notice}
          </p>
        )}
        {setActive.isSuccess && (
          <p className="notice notice--ok">
            {subscription.active
              ? 'Resumed: new matching granules are delivered again.'
              : 'Paused: nothing is delivered until you resume it.'}
          </p>
        )}
      </div>
      {error && (
        <p className="notice notice--error" role="alert">
          {error.message}
        </p>
      )}
      {confirming && (
        <div className="confirm" role="alertdialog" aria-labelledby="confirm-delete-text">
          <p id="confirm-delete-text">
            Delete “{subscription.name}”? Its delivery log goes too
            {subscription.mode === 'notify'
              ? ''
              : ', and so does its standing order with the links in it'}
            .
          </p>
          <div className="actions">
            <button
              type="button"
              ref={confirmRef}
              className="button"
              disabled={remove.isPending}
              onClick={() => remove.mutate()}
            >
              {remove.isPending ? 'Deleting…' : 'Delete subscription'}
            </button>
            <button type="button" className="button button--quiet" onClick={cancelDelete}>
              Keep it
            </button>
          </div>
        </div>
      )}

      <dl className="figures summary-list">
        <div>
          <dt>Collections</dt>
          <dd className="mono wrap">{subscription.collections.join(', ')}</dd>
        </div>
        <div>
          <dt>Area</dt>
          <dd>{area}</dd>
        </div>
        <div>
          <dt>Time window</dt>
          <dd>{window}</dd>
        </div>
        <div>
          <dt>Attribute conditions</dt>
          <dd>{conditions}</dd>
        </div>
        <div>
          <dt>Delivery</dt>
          <dd>{MODE_LABELS[subscription.mode]}</dd>
        </div>
        <div>
          <dt>New versions</dt>
          <dd>{subscription.new_versions ? 'Delivered too' : 'Not delivered'}</dd>
        </div>
      </dl>

      <DeliveryLog subscriptionId={subscription.id} />
      <SubscriptionWebhooks subscriptionId={subscription.id} />
    </section>
  );
}
