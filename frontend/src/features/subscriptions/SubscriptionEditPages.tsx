import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';

import { subscriptionQuery } from '../../lib/api/subscriptions/subscription';
import { RequireLogin } from '../../components/RequireLogin';
import { ErrorMessage, Loading } from '../../components/StatusMessage';
import { SubscriptionForm } from './SubscriptionForm';
import './subscriptions.css';

export function NewSubscriptionPage() {
  return (
    <RequireLogin title="New subscription" why="to create a subscription">
      {() => (
        <section className="page" aria-labelledby="new-subscription-heading">
          <p className="breadcrumb">
            <Link to="/subscriptions">Subscriptions</Link> /
          </p>
          <div className="page__header">
            <h1 id="new-subscription-heading">New subscription</h1>
            <p className="page__lead">
              Choose what to match and how to receive it. Each matching granule is delivered once,
              when it is archived.
            </p>
          </div>
          <SubscriptionForm />
        </section>
      )}
    </RequireLogin>
  );
}

export function EditSubscriptionPage() {
  return (
    <RequireLogin title="Edit subscription" why="to edit your subscriptions">
      {() => <EditForm />}
    </RequireLogin>
  );
}

function EditForm() {
  const id = Number(useParams().id);
  const subscription = useQuery(subscriptionQuery(id));
  return (
    <section className="page" aria-labelledby="edit-subscription-heading">
      <p className="breadcrumb">
        <Link to="/subscriptions">Subscriptions</Link> /
      </p>
      <div className="page__header">
        <h1 id="edit-subscription-heading">
          Edit {subscription.data ? `“${subscription.data.name}”` : 'subscription'}
        </h1>
      </div>
      {subscription.isPending && <Loading>Loading the subscription…</Loading>}
      {subscription.isError && (
        <ErrorMessage
          title="Could not load the subscription"
          detail={subscription.error.message}
          error={subscription.error}
          onRetry={() => void subscription.refetch()}
        />
      )}
      {subscription.data && (
        <SubscriptionForm key={subscription.data.id} original={subscription.data} />
      )}
    </section>
  );
}
