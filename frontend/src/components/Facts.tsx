import type { ReactNode } from 'react';

/** One fact of a list: what it is and its value (a term may carry its own markup). */
export type Fact = readonly [term: ReactNode, value: ReactNode];

/** Terms and values as a description list, e.g. an order's figures or a granule's metadata. */
export function Facts({ facts, className = 'figures' }: { facts: Fact[]; className?: string }) {
  return (
    <dl className={className}>
      {facts.map(([term, value], index) => (
        <div key={index}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
