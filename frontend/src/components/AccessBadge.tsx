import type { CollectionAccess } from '../lib/api/types';

const LABELS: Record<CollectionAccess, string> = {
  public: 'Public',
  restricted: 'Restricted',
};

export function AccessBadge({ access }: { access: CollectionAccess }) {
  // Text, not colour alone, carries the meaning.
  return <span className={`badge badge--${access}`}>{LABELS[access] ?? access}</span>;
}
