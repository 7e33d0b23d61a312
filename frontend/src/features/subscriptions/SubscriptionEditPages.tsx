import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router';

import { collectionsQuery } from '../../lib/api/collections/collections';
import { subscriptionQuery } from '../../lib/api/subscriptions/subscription';
import {
  needsCollectionLookup,
  readSearchDraft,
  type SearchDraft,
} from '../../lib/searchSubscription';
import { RequireLogin } from '../../components/RequireLogin';
import { ErrorMessage, Loading } from '../../components/StatusMessage';
import { formFromSearch } from './filterForm';
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
          <NewForm />
        </section>
      )}
    </RequireLogin>
  );
}

/** Most collections a search's free text may resolve to (the search page's own limit). */
const COLLECTION_LIMIT = 100;

/** The form, filled in from the search the user came from ("Subscribe to this search"). */
function NewForm() {
  const [params] = useSearchParams();
  const draft = readSearchDraft(params);
  if (!draft) return <SubscriptionForm />;
  return <FromSearch draft={draft} />;
}

function FromSearch({ draft }: { draft: SearchDraft }) {
  const lookup = needsCollectionLookup(draft);
  const matching = useQuery({
    ...collectionsQuery({ ...draft.collectionFilter, limit: COLLECTION_LIMIT }),
    enabled: lookup,
  });
  if (lookup && matching.isPending) return <Loading>Finding the search’s collections…</Loading>;
  const keys = lookup ? (matching.data?.results.map((c) => c.key) ?? []) : draft.collections;
  const { q, processing_level: level, platform, instrument } = draft.collectionFilter;
  const narrowed = [
    q && `“${q}”`,
    level && `level ${level}`,
    platform && `platform ${platform}`,
    instrument && `instrument ${instrument}`,
  ].filter(Boolean);
  return (
    <>
      <p className="notice" role="status">
        Filled in from your search
        {lookup && narrowed.length > 0 && `: the collections matching ${narrowed.join(', ')}`}.
        Check it, name it and save.
      </p>
      {lookup && matching.isError && (
        <ErrorMessage
          title="Could not find the search’s collections; pick them below"
          detail={matching.error.message}
        />
      )}
      <SubscriptionForm initial={formFromSearch(draft, keys)} />
    </>
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
