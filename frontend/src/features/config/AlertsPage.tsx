import { useQuery } from '@tanstack/react-query';

import { EndpointList, NewEndpointForm } from '../../components/events/EndpointRules';
import { Loaded } from '../../components/Loaded';
import { eventRuleChoicesQuery } from '../../lib/api/events/choices';
import type { EventEndpoint } from '../../lib/api/types';

/** Operators' alerts: a rule per event type (a drive offline, a volume suspect, a queue stuck,
 * a target projected to be missed) sent to a channel. */
export function AlertsPage() {
  const choices = useQuery(eventRuleChoicesQuery());
  return (
    <Loaded query={choices} what="the alert types">
      {(c) => {
        const alerts = new Set(c.types.filter((t) => t.operators_only).map((t) => t.type));
        const isAlert = (e: EventEndpoint) => (e.rules ?? []).some((r) => alerts.has(r.type));
        return (
          <>
            <h1>Alerts</h1>
            <EndpointList pick={isAlert} empty="No alert is sent anywhere yet." />
            <NewEndpointForm
              name="Alerts"
              kinds={['email', 'webhook', 'amqp']}
              types={c.types.filter((t) => t.operators_only)}
              initialTypes={['drive.offline']}
            />
          </>
        );
      }}
    </Loaded>
  );
}
