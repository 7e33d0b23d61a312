import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';

import { authKeys } from '../../lib/api/auth/keys';
import { logIn } from '../../lib/api/auth/login';
import { authMethodsQuery } from '../../lib/api/auth/methods';
import { meQuery } from '../../lib/api/auth/me';
import { safeNext } from './safeNext';

export function LoginPage() {
  const [searchParams] = useSearchParams();
  const next = safeNext(searchParams.get('next'));
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const userId = useId();
  const passwordId = useId();
  const errorRef = useRef<HTMLDivElement>(null);
  const methods = useQuery(authMethodsQuery());
  const sso = methods.data?.oidc;

  const login = useMutation({
    mutationFn: () => logIn(username.trim(), password),
    onSuccess: async (me) => {
      // Data fetched as the anonymous visitor is stale for the new user.
      queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== authKeys.all[0] });
      // A /me/ asked before the login (as the anonymous visitor) must not land after it.
      await queryClient.cancelQueries({ queryKey: meQuery().queryKey });
      queryClient.setQueryData(meQuery().queryKey, me);
      await navigate(next, { replace: true });
    },
  });

  useEffect(() => {
    if (login.isError) errorRef.current?.focus();
  }, [login.isError, login.failureCount]);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    login.mutate();
  }

  return (
    <section className="page page--narrow" aria-labelledby="login-heading">
      <div className="page__header">
        <h1 id="login-heading">Log in</h1>
        <p className="page__lead">
          Operators, providers and users log in with their Granary account.
        </p>
      </div>
      {sso && (
        <p className="form-card">
          <a className="button" href={`${sso.login_url}?next=${encodeURIComponent(next)}`}>
            Sign in with {sso.name}
          </a>
        </p>
      )}
      <form className="form-card" onSubmit={onSubmit} noValidate>
        {login.isError && (
          <div className="status status--error" role="alert" tabIndex={-1} ref={errorRef}>
            <p className="status__title">Could not log in</p>
            <p>{login.error.message}</p>
          </div>
        )}
        <div className="field">
          <label htmlFor={userId}>User name</label>
          <input
            id={userId}
            type="text"
            name="username"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            required
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={passwordId}>Password</label>
          <input
            id={passwordId}
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </div>
        <button type="submit" className="button" disabled={login.isPending}>
          {login.isPending ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </section>
  );
}
