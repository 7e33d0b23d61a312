import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';

import { archiveKeys } from '../../api/archive/keys';
import { archiveRequestsQuery, bulkRequests } from '../../api/archive/requests';
import { ingestKeys } from '../../api/ingest/keys';
import { ingestRequestQuery } from '../../api/ingest/request';
import { ingestRequestsQuery } from '../../api/ingest/requests';
import { retryIngest } from '../../api/ingest/retry';
import { LIVE_REFRESH_MS } from '../../api/live';
import type { ArchiveRequest, ArchiveRequestKind, BulkAction, IngestRequest } from '../../api/types';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { formatBytes, formatDateTime } from '../../lib/format';

const KINDS: ArchiveRequestKind[] = ['migrate', 'recall', 'repack', 'audit'];

export function FailuresPage() {
  return (
    <section className="page" aria-labelledby="failures-heading">
      <div className="page__header">
        <h1 id="failures-heading">Failures</h1>
        <p className="page__lead">What failed, why, and sending it round again.</p>
      </div>
      <ArchiveFailures />
      <IngestFailures />
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
          <select id={kindId} value={kind} onChange={(event) => { setKind(KINDS.find((k) => k === event.target.value) ?? ''); setSelected(new Set()); }}>
            <option value="">all kinds</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>{k}</option>
            ))}
          </select>
        </div>
        <button type="button" className="button button--small" disabled={bulk.isPending || ids.length === 0} onClick={() => run({ action: 'retry', ids })}>
          Retry selected ({ids.length})
        </button>
        <button type="button" className="button button--small button--quiet" disabled={bulk.isPending || ids.length === 0} onClick={() => run({ action: 'cancel', ids })}>
          Cancel selected ({ids.length})
        </button>
        <button type="button" className="button button--small" disabled={bulk.isPending} onClick={() => run({ action: 'retry', all: true })}>
          Retry all failed {kindWords}requests
        </button>
        <button type="button" className="button button--small button--quiet" disabled={bulk.isPending} onClick={() => run({ action: 'cancel', all: true })}>
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
              onToggleAll={(all) => setSelected(all ? new Set(page.results.map((r) => r.id)) : new Set())}
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
  const allChecked = rows.every((row) => selected.has(row.id));
  return (
    <div className="table-card">
      <table className="data-table data-table--cards">
        <caption>
          Failed archive requests{more ? ` (the first ${rows.length}; “Retry all” covers the rest)` : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">
              <input type="checkbox" aria-label="Select all shown" checked={allChecked} onChange={(event) => onToggleAll(event.target.checked)} />
            </th>
            <th scope="col">Request</th>
            <th scope="col">File</th>
            <th scope="col">Group / volume</th>
            <th scope="col" className="numeric">Attempts</th>
            <th scope="col">Error</th>
            <th scope="col">
              <span className="visually-hidden">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td data-label="Select">
                <input type="checkbox" aria-label={`Select request ${row.id}`} checked={selected.has(row.id)} onChange={() => onToggle(row.id)} />
              </td>
              <th scope="row" data-label="Request">
                <span>
                  #{row.id} {row.kind}
                  <span className="muted small"> {formatDateTime(row.finished_at ?? row.created_at)}</span>
                </span>
              </th>
              <td data-label="File" className="mono wrap"><span>{row.file_name ?? '—'} <span className="muted small">{formatBytes(row.bytes_total)}</span></span></td>
              <td data-label="Group / volume">{[row.volume_group, row.volume].filter(Boolean).join(' / ') || '—'}</td>
              <td data-label="Attempts" className="numeric">{row.attempts}</td>
              <td data-label="Error" className="wrap">{row.error || '—'}</td>
              <td data-label="Action">
                <button type="button" className="button button--small" disabled={busy} onClick={() => onRetry(row.id)} aria-label={`Retry request ${row.id}`}>
                  Retry
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function IngestFailures() {
  // The operator's board keeps its own pace, whether or not a request still runs.
  const requests = useQuery({ ...ingestRequestsQuery({ limit: 200 }), refetchInterval: LIVE_REFRESH_MS });
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
      setOutcome({ ok: true, text: `Sent ${result.retried} ${result.retried === 1 ? 'granule' : 'granules'} round again.` });
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
        <button type="button" className="disclosure" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen(!open)}>
          Request #{request.id} {request.label && `“${request.label}”`} from {request.provider}
        </button>
        <span className="muted">
          {request.failed_count} of {request.granule_count} granules failed · {request.state} · {formatDateTime(request.created_at)}
        </span>
        <button type="button" className="button button--small" disabled={retry.isPending} onClick={() => retry.mutate(undefined)} aria-label={`Retry every failed granule of request ${request.id}`}>
          Retry all failed
        </button>
      </div>
      <OutcomeNotice outcome={outcome} />
      <div id={panelId} hidden={!open}>
        {open && (
          <Loaded query={detail} what="the failed granules">
            {(data) => (
              <>
                <div className="table-card">
                  <table className="data-table data-table--cards">
                    <caption>Failed granules of request #{request.id}</caption>
                    <thead>
                      <tr>
                        <th scope="col"><span className="visually-hidden">Select</span></th>
                        <th scope="col">Granule</th>
                        <th scope="col">Disposition</th>
                        <th scope="col">Reason</th>
                        <th scope="col" className="numeric">Attempts</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.granules.map((granule) => (
                        <tr key={granule.position}>
                          <td data-label="Select">
                            <input
                              type="checkbox"
                              aria-label={`Select granule ${granule.granule_id}`}
                              checked={selected.has(granule.position)}
                              onChange={() =>
                                setSelected((old) => {
                                  const next = new Set(old);
                                  if (next.has(granule.position)) next.delete(granule.position);
                                  else next.add(granule.position);
                                  return next;
                                })
                              }
                            />
                          </td>
                          <th scope="row" data-label="Granule" className="mono wrap">
                            <span>
                              {granule.granule_id} <span className="muted small">{granule.collection}</span>
                            </span>
                          </th>
                          <td data-label="Disposition">{granule.disposition || '—'}</td>
                          <td data-label="Reason" className="wrap">{granule.reason || '—'}</td>
                          <td data-label="Attempts" className="numeric">{granule.attempts}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <button type="button" className="button button--small" disabled={retry.isPending || positions.length === 0} onClick={() => retry.mutate(positions)}>
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
