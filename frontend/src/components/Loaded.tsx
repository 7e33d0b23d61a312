import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';

import { ErrorMessage, Loading } from './StatusMessage';

/**
 * The three faces of a dashboard panel: loading, the API's own error words (with a retry), or
 * the data. A failed refresh keeps the last figures and says so above them.
 */
export function Loaded<T>({
  query,
  what,
  children,
}: {
  query: UseQueryResult<T>;
  /** "the drives": completes "Loading …" and "Could not load …". */
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading>Loading {what}…</Loading>;
  if (query.isError && query.data === undefined) {
    return (
      <ErrorMessage
        title={`Could not load ${what}`}
        detail={query.error.message}
        error={query.error}
        onRetry={() => void query.refetch()}
      />
    );
  }
  return (
    <>
      {query.isError && (
        <ErrorMessage
          title={`Could not refresh ${what}; showing the last figures`}
          detail={query.error.message}
        />
      )}
      {query.data !== undefined && children(query.data)}
    </>
  );
}
