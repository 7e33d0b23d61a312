import type { ReactNode } from 'react';

import { ApiError, canRetry } from '../lib/api/client';

export function Loading({ children }: { children: ReactNode }) {
  return (
    <p className="status status--loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {children}
    </p>
  );
}

/** What the reader can do about an error the server's own words do not cover. */
function advice(error: unknown): string | null {
  if (!(error instanceof ApiError)) return null;
  if (error.status === 429 || error.status === 503)
    return 'The archive is busy right now; wait a minute, then try again.';
  if (error.status >= 500) return 'This is a fault on the archive’s side; trying again may help.';
  if (error.status === 404) return 'Check the address, or go back and pick it again from a list.';
  return null;
}

interface RetryProps {
  /** The failure: decides whether "Try again" is offered (see canRetry) and what to advise. */
  error?: unknown;
  /** Offered only with an `error` that asking again can cure. */
  onRetry?: () => void;
}

/**
 * An error the reader can act on: the server's words, advice by kind, and "Try again" only
 * where asking again can help (unreachable, 5xx, 429/503), never on a 404 or a refused request.
 */
export function ErrorMessage({
  title,
  detail,
  error,
  onRetry,
}: { title: string; detail: string } & RetryProps) {
  const hint = advice(error);
  return (
    <div className="status status--error" role="alert">
      <p className="status__title">{title}</p>
      <p>{detail}</p>
      {hint && <p>{hint}</p>}
      {onRetry && canRetry(error) && (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="status status--empty">
      <p className="status__title">{title}</p>
      {children}
    </div>
  );
}
