import type { Remedy } from '../lib/api/types';
import './Remedies.css';

const NAMES: Record<Remedy['action'], string> = {
  retry: 'Retry',
  repair: 'Repair',
  redeliver: 'Redeliver',
};

/** The action named `name` among the server's `actions`, when it offers it. */
export function remedy(actions: Remedy[] | undefined, name: Remedy['action']) {
  return actions?.find((a) => a.action === name);
}

/** Whether the server says `name` can succeed. */
export function canDo(actions: Remedy[] | undefined, name: Remedy['action']) {
  return remedy(actions, name)?.possible === true;
}

/**
 * Why each action the server ruled out cannot succeed ("Retry is not possible: ..."), so a
 * button that would only fail again is replaced by its reason.
 */
export function WhyNot({ actions, only }: { actions?: Remedy[]; only?: Remedy['action'][] }) {
  const ruledOut = (actions ?? []).filter((a) => !a.possible && (!only || only.includes(a.action)));
  if (ruledOut.length === 0) return null;
  return (
    <ul className="why-not small">
      {ruledOut.map((a) => (
        <li key={a.action}>
          <strong>{NAMES[a.action]} is not possible:</strong> {a.reason}
        </li>
      ))}
    </ul>
  );
}
