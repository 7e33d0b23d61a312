import { StateBadge, type Tone } from '../../components/StateBadge';
import type { GranuleState } from '../../lib/api/types';

export const GRANULE_STATES: GranuleState[] = [
  'registered',
  'archiving',
  'archived',
  'failed',
  'superseded',
  'withdrawn',
  'deleted',
];

const TONES: Record<GranuleState, Tone> = {
  registered: 'wait',
  archiving: 'busy',
  archived: 'ok',
  failed: 'bad',
  superseded: 'off',
  withdrawn: 'off',
  deleted: 'off',
};

export function GranuleStateBadge({ state }: { state: GranuleState }) {
  return <StateBadge tone={TONES[state]}>{state}</StateBadge>;
}
