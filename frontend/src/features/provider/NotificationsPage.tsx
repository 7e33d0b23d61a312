import { useQuery } from '@tanstack/react-query';

import { EndpointList, NewEndpointForm } from '../../components/events/EndpointRules';
import { Loaded } from '../../components/Loaded';
import { eventRuleChoicesQuery } from '../../lib/api/events/choices';
import type { EventEndpoint } from '../../lib/api/types';

const INGEST = /^(granule|ingest)\./;

function isIngestEndpoint(endpoint: EventEndpoint) {
  return (endpoint.rules ?? []).some((r) => INGEST.test(r.type) && r.collection_key);
}

/** The modern PAN: the provider's collections' ingest events (granule archived or failed, a
 * request or PDR finished) sent to a signed webhook or their mail. */
export function NotificationsPage() {
  const choices = useQuery(eventRuleChoicesQuery());
  return (
    <>
      <h1>Notifications</h1>
      <p className="hint">
        Each event is a CloudEvents document; webhooks are signed (Standard Webhooks) and retried
        until delivered.
      </p>
      <EndpointList pick={isIngestEndpoint} empty="No endpoint receives your ingest events yet." />
      <Loaded query={choices} what="the events you may receive">
        {(c) => (
          <NewEndpointForm
            name="Ingest events"
            kinds={['webhook', 'email']}
            types={c.types.filter((t) => INGEST.test(t.type))}
            collections={c.collections}
            initialTypes={['granule.archived']}
          />
        )}
      </Loaded>
    </>
  );
}
