import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'react-router';

import { meQuery } from '../lib/api/auth/me';
import type { Me, Role } from '../lib/api/types';
import { ErrorMessage, Loading } from './StatusMessage';

/**
 * A page for logged-in users (of some roles): anyone else is told why and offered the login,
 * never shown a blank page. The API checks again on every call anyway.
 */
export function RequireLogin({
  title,
  why,
  roles,
  audience,
  children,
}: {
  /** The page's heading, shown above the explanation. */
  title: string;
  /** "to keep subscriptions": completes "Log in …". */
  why: string;
  /** Roles allowed in; any logged-in user when left out. */
  roles?: Role[];
  /** Who the page is for, e.g. "The dashboards are for archive operators". */
  audience?: string;
  children: (me: Me) => ReactNode;
}) {
  const me = useQuery(meQuery());
  const location = useLocation();

  if (me.isPending) return <Loading>Checking who you are…</Loading>;
  if (me.isError) {
    return (
      <ErrorMessage
        title="Could not tell who you are"
        detail={me.error.message}
        error={me.error}
        onRetry={() => void me.refetch()}
      />
    );
  }
  if (!me.data.authenticated) {
    const next = encodeURIComponent(`${location.pathname}${location.search}`);
    return (
      <section className="page">
        <h1>{title}</h1>
        <p>
          {audience && `${audience}. `}
          <Link to={`/login?next=${next}`}>Log in</Link> {why}.
        </p>
      </section>
    );
  }
  if (roles && !roles.some((role) => me.data.roles.includes(role) || me.data.role === role)) {
    return (
      <section className="page">
        <h1>{title}</h1>
        <p>
          {audience ?? `This page is for ${roles.join(' and ')} accounts`}; {me.data.username} is
          not one.
        </p>
      </section>
    );
  }
  return <>{children(me.data)}</>;
}
