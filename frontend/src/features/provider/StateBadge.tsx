/** A request, granule or PDR state as text on a colour that agrees with it. */
const TONES: Record<string, string> = {
  completed: 'ok',
  archived: 'ok',
  answered: 'ok',
  failed: 'bad',
  rejected: 'bad',
};

export function StateBadge({ state }: { state: string }) {
  return <span className={`badge badge--tone-${TONES[state] ?? 'busy'}`}>{state}</span>;
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
