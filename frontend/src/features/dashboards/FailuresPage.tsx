import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';

import { archiveKeys } from '../../lib/api/archive/keys';
import { archiveRequestsQuery, bulkRequests } from '../../lib/api/archive/requests';
import { ingestKeys } from '../../lib/api/ingest/keys';
import { ingestRequestQuery } from '../../lib/api/ingest/request';
import { ingestRequestsQuery } from '../../lib/api/ingest/requests';
import { retryIngest } from '../../lib/api/ingest/retry';
import { LIVE_REFRESH_MS } from '../../lib/api/live';
import type {
  ArchiveRequest,
  ArchiveRequestKind,
  BulkAction,
  IngestGranuleRow,
  IngestRequest,
} from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { canDo, WhyNot } from '../../components/Remedies';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { formatBytes, formatDateTime } from '../../lib/format';
import { DeadLetters } from './DeadLetters';
import { FailureGroups } from './FailureGroups';
import { ReconciliationSection } from './ReconciliationSection';

const KINDS: ArchiveRequestKind[] = ['migrate', 'recall', 'repack', 'audit'];

export function FailuresPage() {
  return (
    <section className="page" aria-labelledby="failures-heading">
      <div className="page__header">
        <h1 id="failures-heading">Failures</h1>
        <p className="page__lead">
          What failed, grouped by why, and sending it round again; what used up its retries; what
          reconciliation found, and repairing it.
        </p>
      </div>
      <FailureGroups />
      <ArchiveFailures />
      <IngestFailures />
      <DeadLetters />
      <ReconciliationSection />
    </section>
  );
}

function describe(action: BulkAction, count: number): string {
  const verb = action.action === 'retry' ? 'Retried' : 'Cancelled';
  return `${verb} ${count} ${count === 1 ? 'request' : 'requests'}.`;
}

function ArchiveFailures() {
  const [kind, setKind] = useState<ArchiveRequestKind | ''>('');
  const kindId = useId();
  const failed = useQuery(archiveRequestsQuery('failed', kind));
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const bulk = useMutation({
    mutationFn: bulkRequests,
    onSuccess: (result, action) => {
      setOutcome({ ok: true, text: describe(action, result.count) });
      setSelected(new Set());
      void queryClient.invalidateQueries({ queryKey: archiveKeys.all });
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });

  function run(action: BulkAction) {
    setOutcome(null);
    bulk.mutate(kind ? { ...action, kind } : action);
  }

  function toggle(id: number) {
    setSelected((old) => {
      const next = new Set(old);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }

  const ids = [...selected];
  const kindWords = kind ? `${kind} ` : '';
  return (
    <section className="dash-section" aria-labelledby="archive-failures-heading">
      <h2 id="archive-failures-heading">Archive requests</h2>
      <div className="toolbar">
        <div className="field field--inline">
          <label htmlFor={kindId}>Kind</label>
          <select
            id={kindId}
            value={kind}
            onChange={(event) => {
              setKind(KINDS.find((k) => k === event.target.value) ?? '');
              setSelected(new Set());
            }}
          >
            <option value="">all kinds</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          className="button button--small"
          disabled={bulk.isPending || ids.length === 0}
          onClick={() => run({ action: 'retry', ids })}
        >
          Retry selected ({ids.length})
        </button>
        <button
          type="button"
          className="button button--small button--quiet"
          disabled={bulk.isPending || ids.length === 0}
          onClick={() => run({ action: 'cancel', ids })}
        >
          Cancel selected ({ids.length})
        </button>
        <button
          type="button"
          className="button button--small"
          disabled={bulk.isPending}
          onClick={() => run({ action: 'retry', all: true })}
        >
          Retry all failed {kindWords}requests
        </button>
        <button
          type="button"
          className="button button--small button--quiet"
          disabled={bulk.isPending}
          onClick={() => run({ action: 'cancel', all: true })}
        >
          Cancel all queued {kindWords}requests
        </button>
      </div>
      <OutcomeNotice outcome={outcome} />
      <Loaded query={failed} what="the failed archive requests">
        {(page) =>
          page.results.length === 0 ? (
            <div className="status status--empty">
              <p className="status__title">No failed {kindWords}archive requests</p>
            </div>
          ) : (
            <FailedTable
              rows={page.results}
              more={Boolean(page.next)}
              selected={selected}
              onToggle={toggle}
              onToggleAll={(all) =>
                setSelected(all ? new Set(page.results.map((r) => r.id)) : new Set())
              }
              onRetry={(id) => run({ action: 'retry', ids: [id] })}
              busy={bulk.isPending}
            />
          )
        }
      </Loaded>
    </section>
  );
}

function FailedTable({
  rows,
  more,
  selected,
  onToggle,
  onToggleAll,
  onRetry,
  busy,
}: {
  rows: ArchiveRequest[];
  more: boolean;
  selected: Set<number>;
  onToggle: (id: number) => void;
  onToggleAll: (all: boolean) => void;
  onRetry: (id: number) => void;
  busy: boolean;
}) {
  const columns: Column<ArchiveRequest>[] = [
    {
      label: 'Request',
      rowHeader: true,
      cell: (row) => (
        <span>
          #{row.id} {row.kind}
          <span className="muted small"> {formatDateTime(row.finished_at ?? row.created_at)}</span>
        </span>
      ),
    },
    {
      label: 'File',
      className: 'mono wrap',
      cell: (row) => (
        <span>
          {row.file_name ?? '—'} <span className="muted small">{formatBytes(row.bytes_total)}</span>
        </span>
      ),
    },
    {
      label: 'Where',
      cell: (row) =>
        [row.volume_group, row.volume, row.bucket && `bucket ${row.bucket}`]
          .filter(Boolean)
          .join(' / ') || '—',
    },
    { label: 'Attempts', numeric: true, cell: (row) => row.attempts },
    { label: 'Error', className: 'wrap', cell: (row) => row.error || '—' },
    {
      label: 'Action',
      header: 'hidden',
      className: 'wrap',
      cell: (row) =>
        canDo(row.actions, 'retry') ? (
          <button
            type="button"
            className="button button--small"
            disabled={busy}
            onClick={() => onRetry(row.id)}
            aria-label={`Retry request ${row.id}`}
          >
            Retry
          </button>
        ) : (
          <WhyNot actions={row.actions} />
        ),
    },
  ];
  return (
    <DataTable
      columns={columns}
      rows={rows}
      rowKey={(row) => row.id}
      caption={`Failed archive requests${more ? ` (the first ${rows.length}; “Retry all” covers the rest)` : ''}`}
      selection={{
        isSelected: (row) => selected.has(row.id),
        onToggle: (row) => onToggle(row.id),
        onToggleAll,
        label: (row) => `Select request ${row.id}`,
      }}
    />
  );
}

function IngestFailures() {
  // The operator's board keeps its own pace, whether or not a request still runs.
  const requests = useQuery({
    ...ingestRequestsQuery({ limit: 200 }),
    refetchInterval: LIVE_REFRESH_MS,
  });
  return (
    <section className="dash-section" aria-labelledby="ingest-failures-heading">
      <h2 id="ingest-failures-heading">Ingest requests with failed granules</h2>
      <Loaded query={requests} what="the ingest requests">
        {(page) => {
          const failing = page.results.filter((request) => request.failed_count > 0);
          return failing.length === 0 ? (
            <div className="status status--empty">
              <p className="status__title">No failed granules</p>
              <p>
                {page.results.length
                  ? `None of the ${page.results.length} most recent ingest requests has a failed granule.`
                  : 'No ingest requests yet.'}
              </p>
            </div>
          ) : (
            <ul className="ingest-failures">
              {failing.map((request) => (
                <IngestFailure key={request.id} request={request} />
              ))}
            </ul>
          );
        }}
      </Loaded>
    </section>
  );
}

const GRANULE_COLUMNS: Column<IngestGranuleRow>[] = [
  {
    label: 'Granule',
    rowHeader: true,
    className: 'mono wrap',
    cell: (granule) => (
      <span>
        {granule.granule_id} <span className="muted small">{granule.collection}</span>
      </span>
    ),
  },
  { label: 'Disposition', cell: (granule) => granule.disposition || '—' },
  {
    label: 'Reason',
    className: 'wrap',
    cell: (granule) => (
      <>
        {granule.reason || '—'}
        <WhyNot actions={granule.actions} only={['retry']} />
      </>
    ),
  },
  { label: 'Attempts', numeric: true, cell: (granule) => granule.attempts },
];

function IngestFailure({ request }: { request: IngestRequest }) {
  const [open, setOpen] = useState(false);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const queryClient = useQueryClient();
  const detail = useQuery({
    ...ingestRequestQuery(request.id, 'failed'),
    refetchInterval: LIVE_REFRESH_MS,
    enabled: open,
  });
  const retry = useMutation({
    mutationFn: (positions?: number[]) => retryIngest(request.id, positions),
    onSuccess: (result) => {
      setOutcome({
        ok: true,
        text: `Sent ${result.retried} ${result.retried === 1 ? 'granule' : 'granules'} round again.`,
      });
      setSelected(new Set());
      void queryClient.invalidateQueries({ queryKey: ingestKeys.all });
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });
  const panelId = useId();
  const positions = [...selected];

  return (
    <li className="ingest-failure">
      <div className="ingest-failure__head">
        <button
          type="button"
          className="disclosure"
          aria-expanded={open}
          aria-controls={panelId}
          onClick={() => setOpen(!open)}
        >
          Request #{request.id} {request.label && `“${request.label}”`} from {request.provider}
        </button>
        <span className="muted">
          {request.failed_count} of {request.granule_count} granules failed · {request.state} ·{' '}
          {formatDateTime(request.created_at)}
        </span>
        <button
          type="button"
          className="button button--small"
          disabled={retry.isPending}
          onClick={() => retry.mutate(undefined)}
          aria-label={`Retry every failed granule of request ${request.id}`}
        >
          Retry all failed
        </button>
      </div>
      <OutcomeNotice outcome={outcome} />
      <div id={panelId} hidden={!open}>
        {open && (
          <Loaded query={detail} what="the failed granules">
            {(data) => (
              <>
                <DataTable
                  columns={GRANULE_COLUMNS}
                  rows={data.granules ?? []}
                  rowKey={(granule) => granule.position}
                  caption={`Failed granules of request #${request.id}`}
                  selection={{
                    isSelected: (granule) => selected.has(granule.position),
                    onToggle: (granule) =>
                      setSelected((old) => {
                        const next = new Set(old);
                        if (next.has(granule.position)) next.delete(granule.position);
                        else next.add(granule.position);
                        return next;
                      }),
                    label: (granule) => `Select granule ${granule.granule_id}`,
                  }}
                />
                <button
                  type="button"
                  className="button button--small"
                  disabled={retry.isPending || positions.length === 0}
                  onClick={() => retry.mutate(positions)}
                >
                  Retry selected granules ({positions.length})
                </button>
              </>
            )}
          </Loaded>
        )}
      </div>
    </li>
  );
}
