import type { ReactNode } from 'react';

export function Loading({ children }: { children: ReactNode }) {
  return (
    <p className="status status--loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {children}
    </p>
  );
}

export function ErrorMessage({
  title,
  detail,
  onRetry,
}: {
  title: string;
  detail: string;
  onRetry?: () => void;
}) {
  return (
    <div className="status status--error" role="alert">
      <p className="status__title">{title}</p>
      <p>{detail}</p>
      {onRetry && (
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
