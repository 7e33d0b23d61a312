import type { ReactNode } from 'react';

/** One thing out of service: its name, its state (a badge) and the reason recorded. */
export interface Fault {
  name: string;
  state: string;
  reason: string;
}

/** Drives or volumes a fault took out of service, each with the reason the archive recorded;
 * `empty` stands in when there is none (nothing at all unless given). */
export function FaultList({
  title,
  label,
  faults,
  empty = null,
}: {
  title: string;
  label: string;
  faults: Fault[];
  empty?: ReactNode;
}) {
  if (faults.length === 0) return empty;
  return (
    <>
      <h3 className="drive-faults__title">{title}</h3>
      <ul className="drive-faults" aria-label={label}>
        {faults.map((fault) => (
          <li key={fault.name}>
            <span className="mono">{fault.name}</span>{' '}
            <span className={`badge badge--state badge--${fault.state}`}>{fault.state}</span>{' '}
            {fault.reason}
          </li>
        ))}
      </ul>
    </>
  );
}
