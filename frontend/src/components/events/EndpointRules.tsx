import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';

import { deleteEventEndpoint } from '../../lib/api/events/endpoint';
import { createEventEndpoint, eventEndpointsQuery } from '../../lib/api/events/endpoints';
import { eventKeys } from '../../lib/api/events/keys';
import type { EventEndpoint, EventRule } from '../../lib/api/types';
import { Field } from '../Field';
import { Loaded } from '../Loaded';
import { DeliveryLog, endpointTarget } from './DeliveryLog';

type Kind = 'webhook' | 'email' | 'amqp';
export type TypeChoice = { type: string; description: string };

const KIND_LABELS: Record<Kind, string> = {
  webhook: 'Signed webhook',
  email: 'My mail',
  amqp: 'AMQP topic exchange',
};

function toggled(list: string[], item: string, on: boolean) {
  return on ? [...list, item] : list.filter((x) => x !== item);
}

/** A new endpoint with a rule per chosen type (and per chosen collection, when collections
 * are offered): the endpoint's secret, for a webhook, is shown this once. */
export function NewEndpointForm({
  name,
  kinds,
  types,
  collections,
  initialTypes,
}: {
  name: string;
  kinds: Kind[];
  types: TypeChoice[];
  collections?: string[];
  initialTypes: string[];
}) {
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<Kind>(kinds[0] ?? 'webhook');
  const [url, setUrl] = useState('');
  const [chosen, setChosen] = useState<string[]>(initialTypes);
  const [keys, setKeys] = useState<string[]>(collections ?? []);
  const rules: EventRule[] = chosen.flatMap((type) =>
    collections ? keys.map((key) => ({ type, collection_key: key })) : [{ type }],
  );
  const add = useMutation({
    mutationFn: () =>
      createEventEndpoint({ kind, url: kind === 'webhook' ? url : '', name, rules }),
    onSuccess: async () => {
      setUrl('');
      await queryClient.invalidateQueries({ queryKey: eventKeys.list() });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    add.mutate();
  }
  return (
    <form className="form-card page-section" onSubmit={submit} noValidate>
      <h2>New endpoint</h2>
      {add.isError && (
        <p className="notice notice--error" role="alert">
          {add.error.message}
        </p>
      )}
      {add.data?.secret && (
        <p className="notice notice--ok" role="status">
          Endpoint added. Its signing secret, shown this once:{' '}
          <code className="mono wrap" data-testid="webhook-secret">
            {add.data.secret}
          </code>
        </p>
      )}
      {add.data && !add.data.secret && (
        <p className="notice notice--ok" role="status">
          Endpoint added.
        </p>
      )}
      {kinds.length > 1 && (
        <Field id="endpoint-kind" label="Channel">
          <select id="endpoint-kind" value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </select>
        </Field>
      )}
      {kind === 'webhook' && (
        <Field id="endpoint-url" label="Webhook URL">
          <input
            id="endpoint-url"
            type="url"
            required
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
        </Field>
      )}
      <fieldset className="field">
        <legend>Events</legend>
        {types.map(({ type, description }) => (
          <label key={type} className="checkbox">
            <input
              type="checkbox"
              checked={chosen.includes(type)}
              onChange={(e) => setChosen((held) => toggled(held, type, e.target.checked))}
            />{' '}
            <span className="mono">{type}</span>: {description}
          </label>
        ))}
      </fieldset>
      {collections && (
        <fieldset className="field">
          <legend>Collections</legend>
          {collections.length === 0 && <p className="hint">You deliver no collection yet.</p>}
          {collections.map((key) => (
            <label key={key} className="checkbox">
              <input
                type="checkbox"
                checked={keys.includes(key)}
                onChange={(e) => setKeys((held) => toggled(held, key, e.target.checked))}
              />{' '}
              {key}
            </label>
          ))}
        </fieldset>
      )}
      <div className="actions">
        <button className="button" type="submit" disabled={add.isPending || !rules.length}>
          Add endpoint
        </button>
      </div>
    </form>
  );
}

/** The caller's endpoints that `pick` chooses, each with its rules, delivery log, a test
 * button and a button to remove it. */
export function EndpointList({
  pick,
  empty,
}: {
  pick: (endpoint: EventEndpoint) => boolean;
  empty: string;
}) {
  const endpoints = useQuery(eventEndpointsQuery());
  return (
    <Loaded query={endpoints} what="your endpoints">
      {(rows) => {
        const shown = rows.filter(pick);
        if (!shown.length) return <p className="hint">{empty}</p>;
        return (
          <>
            {shown.map((endpoint) => (
              <EndpointItem key={endpoint.id} endpoint={endpoint} />
            ))}
          </>
        );
      }}
    </Loaded>
  );
}

function EndpointItem({ endpoint }: { endpoint: EventEndpoint }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => deleteEventEndpoint(endpoint.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: eventKeys.list() }),
  });
  const rules = (endpoint.rules ?? [])
    .map((r) => (r.collection_key ? `${r.type} of ${r.collection_key}` : r.type))
    .join(', ');
  return (
    <section className="page-section" aria-label={`Endpoint ${endpointTarget(endpoint)}`}>
      <h3>
        {KIND_LABELS[endpoint.kind as Kind] ?? endpoint.kind}{' '}
        <button
          type="button"
          className="button button--quiet"
          disabled={remove.isPending}
          onClick={() => remove.mutate()}
        >
          Remove
        </button>
      </h3>
      <p className="hint">Rules: {rules || 'none'}</p>
      <DeliveryLog endpoint={endpoint} />
    </section>
  );
}
