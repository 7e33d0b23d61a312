import type { ReactNode } from 'react';

import './StateBadge.css';

/**
 * How a state reads: done well (ok), on its way (wait, busy), needs a look (bad), over and
 * done with (off), or just a fact (plain).
 */
export type Tone = 'ok' | 'wait' | 'busy' | 'bad' | 'off' | 'plain';

/** A state in words on a colour that agrees with it (the words carry it, never colour alone). */
export function StateBadge({ tone, children }: { tone: Tone; children: ReactNode }) {
  return <span className={`badge badge--${tone}`}>{children}</span>;
}
