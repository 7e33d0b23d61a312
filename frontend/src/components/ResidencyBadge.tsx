import type { Residency } from '../lib/api/types';
import './portal.css';

const LABELS: Record<Residency, { text: string; title: string }> = {
  cache: { text: 'In cache', title: 'On disk now: ready to download at once' },
  tape: { text: 'On tape', title: 'Only on tape: an order recalls it first, which takes minutes' },
};

/** Where a granule's bytes are, in words (never colour alone). */
export function ResidencyBadge({ residency }: { residency: Residency }) {
  const label = LABELS[residency] ?? { text: residency, title: '' };
  return (
    <span className={`badge badge--${residency}`} title={label.title}>
      {label.text}
    </span>
  );
}
