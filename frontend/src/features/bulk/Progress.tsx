import { formatPercent } from '../../lib/format';
import type { BulkJob } from '../../lib/api/types';

/** A job's share of items final, as a bar with its figure (the words carry it too). */
export function Progress({ job }: { job: BulkJob }) {
  const pct = Math.max(0, Math.min(100, job.percent_done));
  return (
    <div className="bulk-progress">
      <div
        className="bulk-progress__bar"
        role="progressbar"
        aria-label={`Job ${job.id} progress`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
      >
        <div
          className={`bulk-progress__fill bulk-progress__fill--${job.state}`}
          style={{ width: `${pct}%` }}
        />
      </div>
      <span className="bulk-progress__figure">{formatPercent(pct)}</span>
    </div>
  );
}
