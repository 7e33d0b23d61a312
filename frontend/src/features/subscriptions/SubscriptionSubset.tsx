import { useQueries } from '@tanstack/react-query';

import { collectionQuery } from '../../lib/api/collections/collection';
import {
  SUBSET_FORMATS,
  SubsetChoices,
  type SubsetDraft,
} from '../../components/subset/SubsetChoices';

/**
 * A standing order with subsetting: each data file the subscription delivers is cut to these
 * choices. The variables offered are those the chosen collections list; the server checks the
 * rest when the subscription is saved (and refuses a subset on one that only notifies).
 */
export function SubscriptionSubset({
  collections,
  draft,
  onChange,
  error,
}: {
  collections: string[];
  draft: SubsetDraft;
  onChange: (draft: SubsetDraft) => void;
  error?: string;
}) {
  const details = useQueries({
    queries: collections.map((key) => ({ ...collectionQuery(key), enabled: draft.on })),
  });
  const variables = details.flatMap((d) => (d.data?.variables ?? []).map((v) => v.name));
  const cannot = details.flatMap((d) =>
    d.data && d.data.variables.length === 0 ? [d.data.key] : [],
  );
  return (
    <SubsetChoices
      className="subfields"
      draft={draft}
      onChange={onChange}
      variables={variables}
      formats={SUBSET_FORMATS}
      cannot={cannot}
      searchArea={null}
      status={
        error ? (
          <p className="field-error" id="subset-error">
            {error}
          </p>
        ) : (
          <p className="hint">Each data file delivered is cut to these choices before it goes.</p>
        )
      }
    />
  );
}
