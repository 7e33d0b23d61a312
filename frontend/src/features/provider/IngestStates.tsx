import { StateBadge, type Tone } from '../../components/StateBadge';

/** Request, granule and PDR states that are over: well, or not. */
const TONES: Partial<Record<string, Tone>> = {
  completed: 'ok',
  archived: 'ok',
  answered: 'ok',
  failed: 'bad',
  rejected: 'bad',
};

/** A request, granule or PDR state as it is named, on a colour that agrees with it. */
export function IngestStateBadge({ state }: { state: string }) {
  return <StateBadge tone={TONES[state] ?? 'busy'}>{state}</StateBadge>;
}

/** % done in bytes as a bar with the number beside it. */
export function PercentDone({ percent, label }: { percent: number; label: string }) {
  return (
    <span className="progress-cell">
      <progress max={100} value={percent} aria-label={label} />
      <span>{percent.toFixed(percent >= 10 || percent === 0 ? 0 : 1)} %</span>
    </span>
  );
}
