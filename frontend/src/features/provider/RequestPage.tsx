import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link, useParams } from 'react-router';

import { ingestKeys } from '../../lib/api/ingest/keys';
import { GRANULE_STATES, ingestRequestQuery } from '../../lib/api/ingest/request';
import { idFromUrl, isFinal, PROVIDER_REFRESH_MS } from '../../lib/api/ingest/requests';
import { retryIngest } from '../../lib/api/ingest/retry';
import type { IngestGranuleRow, IngestRequestDetail } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { canDo, WhyNot } from '../../components/Remedies';
import { EmptyState } from '../../components/StatusMessage';
import { formatBytes, formatCount, formatDateTime } from '../../lib/format';
import { IngestStateBadge, PercentDone } from './IngestStates';

/** Rows drawn at once; a request can hold 10,000 granules. */
const PAGE_ROWS = 100;

export function RequestPage() {
  const id = Number(useParams().id);
  const [state, setState] = useState('');
  const request = useQuery(ingestRequestQuery(id, state));
  return (
    <section className="page" aria-labelledby="request-heading">
      <p className="breadcrumb">
        <Link to="/provider">Ingest requests</Link> /
      </p>
      <h1 id="request-heading">
        Ingest request {id} {request.data && <IngestStateBadge state={request.data.state} />}
      </h1>
      <Loaded query={request} what={`ingest request ${id}`}>
        {(data) => <RequestDetail request={data} state={state} onState={setState} />}
      </Loaded>
    </section>
  );
}

function RequestDetail({
  request,
  state,
  onState,
}: {
  request: IngestRequestDetail;
  state: string;
  onState: (s: string) => void;
}) {
  const queryClient = useQueryClient();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const retry = useMutation({
    mutationFn: (positions?: number[]) => retryIngest(request.id, positions),
    onMutate: () => setOutcome(null),
    onSuccess: async (result) => {
      const granules = result.retried === 1 ? 'granule' : 'granules';
      setOutcome({
        ok: true,
        text: `Sent ${formatCount(result.retried)} ${granules} round again.`,
      });
      await queryClient.invalidateQueries({ queryKey: ingestKeys.all });
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });
  const pdrId = idFromUrl(request.pdr);
  const failed = request.counts.failed ?? request.failed_count;
  const rows = request.granules ?? [];
  // the rows hold every failed granule when no other state is chosen
  const known = state === '' || state === 'failed';
  const retryable = rows
    .filter((row) => row.state === 'failed' && canDo(row.actions, 'retry'))
    .map((row) => row.position);
  const retryCount = known ? retryable.length : failed;
  const stopped = rows.filter((row) => row.stopped && row.state !== 'failed').length;

  return (
    <>
      <div className="progress-card">
        <PercentDone percent={request.percent_done} label="Percent done in bytes" />
        <p className="small muted">
          {formatBytes(request.bytes_done)} of {formatBytes(request.bytes_total)} in a final state ·{' '}
          {formatCount(request.archived_count)} of {formatCount(request.granule_count)} granules
          archived
          {request.failed_count > 0 && `, ${formatCount(request.failed_count)} failed`}
        </p>
        <ul className="state-counts" aria-label="Granules per state">
          {GRANULE_STATES.filter((s) => request.counts[s]).map((s) => (
            <li key={s}>
              <IngestStateBadge state={s} /> {formatCount(request.counts[s])}
            </li>
          ))}
        </ul>
      </div>

      <dl className="figures summary-list">
        <div>
          <dt>Provider</dt>
          <dd>{request.provider}</dd>
        </div>
        <div>
          <dt>Delivered by</dt>
          <dd>
            {request.way}
            {request.label ? ` · ${request.label}` : ''}
          </dd>
        </div>
        <div>
          <dt>Submitted</dt>
          <dd>{formatDateTime(request.created_at)}</dd>
        </div>
        <div>
          <dt>Last change</dt>
          <dd>{formatDateTime(request.updated_at)}</dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>{request.finished_at ? formatDateTime(request.finished_at) : 'Not yet'}</dd>
        </div>
        {pdrId !== null && (
          <div>
            <dt>From PDR</dt>
            <dd>
              <Link to={`/provider/pdrs/${pdrId}`}>PDR {pdrId} and its PAN</Link>
            </dd>
          </div>
        )}
      </dl>

      {stopped > 0 && (
        <p className="notice notice--error" role="status">
          {formatCount(stopped)} {stopped === 1 ? 'granule has' : 'granules have'} stopped and
          {stopped === 1 ? ' waits' : ' wait'} for someone to act, not for work: see why, and what
          happens next, below.
        </p>
      )}
      {!isFinal(request) && (
        <p className="hint">
          Refreshing every {PROVIDER_REFRESH_MS / 1000} seconds until the request is finished.
        </p>
      )}

      <section className="page-section" aria-labelledby="granules-heading">
        <h2 id="granules-heading">Granules</h2>
        <div className="toolbar">
          <StateFilter value={state} onChange={onState} />
          {retryCount > 0 && (
            <button
              type="button"
              className="button button--small"
              disabled={retry.isPending}
              onClick={() => retry.mutate(known ? retryable : undefined)}
            >
              Retry all {formatCount(retryCount)} failed
            </button>
          )}
          {known && failed > 0 && retryCount === 0 && (
            <p className="small">No failed granule can be retried as it stands: see why below.</p>
          )}
        </div>
        <OutcomeNotice outcome={outcome} />
        <GranuleTable
          key={state}
          rows={rows}
          state={state}
          busy={retry.isPending}
          onRetry={(position) => retry.mutate([position])}
        />
      </section>
    </>
  );
}

function StateFilter({ value, onChange }: { value: string; onChange: (state: string) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Show</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">every granule</option>
        {GRANULE_STATES.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </div>
  );
}

function GranuleTable({
  rows,
  state,
  busy,
  onRetry,
}: {
  rows: IngestGranuleRow[];
  state: string;
  busy: boolean;
  onRetry: (position: number) => void;
}) {
  const [shown, setShown] = useState(PAGE_ROWS);
  const columns: Column<IngestGranuleRow>[] = [
    { label: '#', numeric: true, cell: (row) => row.position },
    {
      label: 'Granule',
      rowHeader: true,
      cell: (row) => (
        <span className="request-name">
          {row.catalog_granule !== null && row.state === 'archived' ? (
            <Link to={`/granules/${row.catalog_granule}`} className="mono">
              {row.granule_id}
            </Link>
          ) : (
            <span className="mono">{row.granule_id}</span>
          )}
          <span className="muted small">{row.collection}</span>
        </span>
      ),
    },
    {
      label: 'State',
      cell: (row) => (
        <>
          <IngestStateBadge state={row.state} />
          {row.attempts > 1 && <span className="muted small"> {row.attempts} attempts</span>}
        </>
      ),
    },
    {
      label: 'Validated',
      cell: (row) => `${formatBytes(row.bytes_done)} of ${formatBytes(row.bytes_total)}`,
    },
    {
      label: 'What it waits for, or why it stopped',
      className: 'wrap',
      cell: (row) => (
        <span className={row.stopped ? 'failure' : 'failure muted'}>
          {row.disposition && <span className="mono small">{row.disposition}</span>}
          <span>{row.status}</span>
        </span>
      ),
    },
    {
      label: 'Actions',
      header: 'hidden',
      className: 'wrap',
      cell: (row) =>
        canDo(row.actions, 'retry') ? (
          <button
            type="button"
            className="button button--small button--quiet"
            disabled={busy}
            onClick={() => onRetry(row.position)}
            aria-label={`Retry ${row.granule_id}`}
          >
            Retry
          </button>
        ) : (
          <WhyNot actions={row.actions} only={['retry']} />
        ),
    },
  ];
  if (rows.length === 0) {
    return <EmptyState title={state ? `No ${state} granules` : 'No granules'} />;
  }
  return (
    <>
      <DataTable
        columns={columns}
        rows={rows.slice(0, shown)}
        rowKey={(row) => row.position}
        caption="Granules of the request in the order delivered"
        captionHidden
      />
      {rows.length > shown && (
        <button
          type="button"
          className="button button--quiet"
          onClick={() => setShown((n) => n + PAGE_ROWS)}
        >
          Show {formatCount(Math.min(PAGE_ROWS, rows.length - shown))} more of{' '}
          {formatCount(rows.length - shown)}
        </button>
      )}
    </>
  );
}
