import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';

import { ErrorMessage, Loading } from './StatusMessage';

/**
 * A page about one thing fetched from the API: a spinner while it loads, the API's own words
 * (with a retry) when it cannot be had, the page itself otherwise. A failed refresh of data
 * already shown is the page's to report, so it keeps what it had.
 */
export function LoadedPage<T>({
  query,
  title,
  what,
  back,
  children,
}: {
  query: UseQueryResult<T>;
  /** The heading shown above an error, e.g. "Order 7". */
  title: string;
  /** "this order": completes "Loading …" and "Could not load …". */
  what: string;
  /** The way back (a breadcrumb), shown in every state. */
  back: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) {
    return (
      <section className="page">
        {back}
        <Loading>Loading {what}…</Loading>
      </section>
    );
  }
  if (query.data === undefined) {
    return (
      <section className="page">
        {back}
        <h1>{title}</h1>
        <ErrorMessage
          title={`Could not load ${what}`}
          detail={query.error?.message ?? 'No answer from the server.'}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      </section>
    );
  }
  return <>{children(query.data)}</>;
}
