import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';

import { CursorPager } from '../../components/CursorPager';
import { type Column, DataTable } from '../../components/DataTable';
import { Facts } from '../../components/Facts';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { StateBadge } from '../../components/StateBadge';
import { cancelBulkJob } from '../../lib/api/bulk/cancel';
import { bulkItemsQuery } from '../../lib/api/bulk/items';
import { bulkJobQuery } from '../../lib/api/bulk/job';
import { bulkKeys } from '../../lib/api/bulk/keys';
import type { BulkItem, BulkItemState, BulkJobDetail, OutcomeGroup } from '../../lib/api/types';
import { formatBytes, formatCount, formatDateTime } from '../../lib/format';
import { Progress } from './Progress';
import { ITEM_TONES, JOB_TONES, kindLabel, selectionText } from './words';
import './bulk.css';

const ITEM_STATES: BulkItemState[] = [
  'pending',
  'waiting',
  'done',
  'skipped',
  'failed',
  'cancelled',
];

const ITEM_COLUMNS: Column<BulkItem>[] = [
  {
    label: 'Granule',
    rowHeader: true,
    className: 'mono wrap',
    cell: (item) =>
      item.granule ? <Link to={`/granules/${item.granule}`}>{item.label}</Link> : item.label,
  },
  { label: 'Size', numeric: true, cell: (item) => formatBytes(item.bytes) },
  {
    label: 'State',
    cell: (item) => <StateBadge tone={ITEM_TONES[item.state]}>{item.state}</StateBadge>,
  },
  { label: 'Outcome', className: 'wrap', cell: (item) => item.outcome || '—' },
];

/** One bulk job: what was asked, how far it is, each granule's outcome, and cancel. */
export function BulkJobPage() {
  const id = Number(useParams().id);
  const job = useQuery(bulkJobQuery(id));
  return (
    <div className="bulk">
      <p>
        <Link to="/dashboards/bulk">← All bulk jobs</Link>
      </p>
      <Loaded query={job} what={`bulk job ${id}`}>
        {(shown) => <JobReport job={shown} />}
      </Loaded>
    </div>
  );
}

function JobReport({ job }: { job: BulkJobDetail }) {
  const queryClient = useQueryClient();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const cancel = useMutation({
    mutationFn: () => cancelBulkJob(job.id),
    onSuccess: (after) => {
      setOutcome({
        ok: true,
        text: `Cancelled ${formatCount(after.counts.cancelled)} granules not yet started.`,
      });
      void queryClient.invalidateQueries({ queryKey: bulkKeys.all });
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });
  const active = job.state === 'queued' || job.state === 'running';
  const c = job.counts;
  return (
    <>
      <section className="dash-section" aria-labelledby="bulk-job-heading">
        <h2 id="bulk-job-heading">
          Bulk job #{job.id}: {kindLabel(job.kind)}{' '}
          <StateBadge tone={JOB_TONES[job.state]}>{job.state}</StateBadge>
        </h2>
        <Progress job={job} />
        <p className="bulk-counts" aria-label="Item counts">
          {formatCount(c.done)} done · {formatCount(c.skipped)} skipped · {formatCount(c.failed)}{' '}
          failed · {formatCount(c.waiting)} waiting for the archive · {formatCount(c.pending)}{' '}
          pending · {formatCount(c.cancelled)} cancelled
        </p>
        <Facts
          facts={[
            ['Granules', `${formatCount(job.granules_total)} (${formatBytes(job.bytes_total)})`],
            ['Selection', selectionText(job)],
            ...(job.target_group ? [['Target group', job.target_group] as const] : []),
            ['Asked by', job.requested_by || 'system'],
            ['Reason', job.reason],
            ['Created', formatDateTime(job.created_at)],
            ['Started', formatDateTime(job.started_at)],
            ['Finished', formatDateTime(job.finished_at)],
          ]}
        />
        {active && (
          <div className="toolbar">
            <button
              type="button"
              className="button button--quiet"
              disabled={cancel.isPending || job.cancelled_at !== null}
              onClick={() => {
                setOutcome(null);
                cancel.mutate();
              }}
            >
              {job.cancelled_at ? 'Cancelling…' : 'Cancel job'}
            </button>
          </div>
        )}
        <OutcomeNotice outcome={outcome} />
      </section>
      <OutcomeGroups groups={job.outcomes} />
      <Items job={job} />
    </>
  );
}

/** Why items were skipped or failed, one line per cause with its count. */
function OutcomeGroups({ groups }: { groups?: OutcomeGroup[] }) {
  if (!groups?.length) return null;
  return (
    <section className="dash-section" aria-labelledby="bulk-why-heading">
      <h2 id="bulk-why-heading">Why granules were skipped or failed</h2>
      <ul className="bulk-why">
        {groups.map((g) => (
          <li key={`${g.state}:${g.pattern}`}>
            <StateBadge tone={ITEM_TONES[g.state]}>{g.state}</StateBadge>{' '}
            <strong>{formatCount(g.count)}</strong>: {g.example}
            {g.count > 1 && <span className="muted small"> (and alike)</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Items({ job }: { job: BulkJobDetail }) {
  const [state, setState] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const items = useQuery(bulkItemsQuery(job.id, state, cursor));
  const queryClient = useQueryClient();
  const progress = `${job.state}:${job.percent_done}`;
  useEffect(() => {
    // the job moved on: its items' outcomes did too
    void queryClient.invalidateQueries({ queryKey: bulkKeys.itemsOf(job.id) });
  }, [queryClient, job.id, progress]);
  return (
    <section className="dash-section" aria-labelledby="bulk-items-heading">
      <h2 id="bulk-items-heading">Granules</h2>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="bulk-item-state">Show</label>
          <select
            id="bulk-item-state"
            value={state}
            onChange={(e) => {
              setState(e.target.value);
              setCursor(null);
            }}
          >
            <option value="">every state</option>
            {ITEM_STATES.map((s) => (
              <option key={s} value={s}>
                {s} ({formatCount(job.counts[s])})
              </option>
            ))}
          </select>
        </div>
      </div>
      <Loaded query={items} what="the job's granules">
        {(page) => (
          <>
            <DataTable
              columns={ITEM_COLUMNS}
              rows={page.results}
              rowKey={(item) => item.id}
              labelledBy="bulk-items-heading"
              busy={items.isPlaceholderData}
              empty={
                <div className="status status--empty">
                  <p className="status__title">No granule in this state</p>
                </div>
              }
            />
            <CursorPager page={page} label="Granule pages" onCursor={setCursor} />
          </>
        )}
      </Loaded>
    </section>
  );
}
