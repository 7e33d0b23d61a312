import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';

import { revokeToken } from '../../lib/api/auth/token';
import { createToken, tokenKeys, tokensQuery } from '../../lib/api/auth/tokens';
import type { ApiToken, ApiTokenRequest, NewApiToken, TokenScope } from '../../lib/api/types';
import { DataTable } from '../../components/DataTable';
import { Field } from '../../components/Field';
import { Loaded } from '../../components/Loaded';
import { RequireLogin } from '../../components/RequireLogin';
import { formatUtc } from '../../lib/format';

const SCOPES: { scope: TokenScope; what: string }[] = [
  { scope: 'read', what: 'read the catalog, orders and downloads' },
  { scope: 'order', what: 'order, fill the cart, subscribe' },
  { scope: 'ingest', what: 'deliver products (providers)' },
  { scope: 'operate', what: 'change the archive (operators)' },
];

/** Personal API tokens for scripts: named, scoped, expiring, revocable; shown once. */
export function TokensPage() {
  return (
    <RequireLogin title="API tokens" why="to manage your API tokens">
      {() => <Tokens />}
    </RequireLogin>
  );
}

function Tokens() {
  const tokens = useQuery(tokensQuery());
  return (
    <section className="page" aria-labelledby="tokens-heading">
      <div className="page__header">
        <h1 id="tokens-heading">API tokens</h1>
        <p className="page__lead">
          Scripts (granary-get, a provider&apos;s client) send one as{' '}
          <span className="mono">Authorization: Bearer …</span>. Granary keeps only a hash: a token
          is shown once, when made. Your role still limits what a token may do.
        </p>
      </div>
      <Loaded query={tokens} what="your tokens">
        {(rows) => (
          <DataTable<ApiToken>
            caption="Your API tokens"
            captionHidden
            rows={rows}
            rowKey={(row) => row.id}
            empty="You have no API tokens."
            columns={[
              { label: 'Name', rowHeader: true, cell: (row) => row.name },
              { label: 'Starts with', cell: (row) => <span className="mono">{row.prefix}</span> },
              { label: 'Scopes', cell: (row) => row.scopes.join(', ') },
              { label: 'Made', cell: (row) => formatUtc(row.created_at) },
              { label: 'Expires', cell: (row) => formatUtc(row.expires_at) },
              { label: 'Last used', cell: (row) => formatUtc(row.last_used_at) },
              { label: 'State', cell: (row) => <TokenState token={row} /> },
            ]}
          />
        )}
      </Loaded>
      <NewTokenForm />
    </section>
  );
}

function TokenState({ token }: { token: ApiToken }) {
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => revokeToken(token.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.all }),
  });
  if (token.revoked_at) return <>revoked {formatUtc(token.revoked_at)}</>;
  if (!token.active) return <>expired</>;
  return (
    <button
      type="button"
      className="button button--small button--quiet"
      disabled={revoke.isPending}
      onClick={() => revoke.mutate()}
    >
      Revoke {token.name}
    </button>
  );
}

function NewTokenForm() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<TokenScope[]>(['read']);
  const [days, setDays] = useState('90');
  const save = useMutation({
    mutationFn: () =>
      createToken({
        name: name.trim(),
        // the API refuses an empty list, with its own sentence
        scopes: scopes as ApiTokenRequest['scopes'],
        days: days ? Number(days) : null,
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.all }),
  });
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate();
  }
  function toggle(scope: TokenScope, on: boolean) {
    setScopes((held) => (on ? [...held, scope] : held.filter((s) => s !== scope)));
  }
  return (
    <form className="form-card page-section" onSubmit={onSubmit} noValidate>
      <h2>New token</h2>
      {save.data && <Made token={save.data} />}
      {save.isError && (
        <p className="notice notice--error" role="alert">
          {save.error.message}
        </p>
      )}
      <Field id="tok-name" label="Name">
        <input id="tok-name" value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <fieldset className="field">
        <legend>Scopes</legend>
        {SCOPES.map(({ scope, what }) => (
          <label key={scope} className="checkbox">
            <input
              type="checkbox"
              checked={scopes.includes(scope)}
              onChange={(e) => toggle(scope, e.target.checked)}
            />{' '}
            {scope}: {what}
          </label>
        ))}
      </fieldset>
      <Field id="tok-days" label="Expires after (days; empty: never)">
        <input
          id="tok-days"
          type="number"
          min={1}
          value={days}
          onChange={(e) => setDays(e.target.value)}
        />
      </Field>
      <div className="actions">
        <button className="button" type="submit" disabled={save.isPending}>
          Make token
        </button>
      </div>
    </form>
  );
}

function Made({ token }: { token: NewApiToken }) {
  return (
    <p className="notice notice--ok" role="status">
      Token {token.name} made. Copy it now; it is not shown again:{' '}
      <span className="mono" data-testid="new-token">
        {token.token}
      </span>
    </p>
  );
}
