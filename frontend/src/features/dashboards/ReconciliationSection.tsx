import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { archiveKeys } from '../../lib/api/archive/keys';
import {
  latestReconciliationQuery,
  startReconciliation,
} from '../../lib/api/archive/reconciliation';
import { remedy, WhyNot } from '../../components/Remedies';
import { repairReconciliation } from '../../lib/api/archive/reconciliationRepair';
import type { Discrepancy, Reconciliation, ReconciliationNote } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { formatBytes, formatDateTime } from '../../lib/format';

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The latest reconciliation (catalog, cache and volumes compared, bytes read): what it found,
 * a button to run another and buttons to repair what it found. */
export function ReconciliationSection() {
  const latest = useQuery(latestReconciliationQuery());
  const queryClient = useQueryClient();
  const [full, setFull] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: archiveKeys.all });

  const start = useMutation({
    mutationFn: startReconciliation,
    onSuccess: (run) => {
      setOutcome({ ok: true, text: `Reconciliation #${run.id} started (${run.scope}).` });
      refresh();
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });
  const repair = useMutation({
    mutationFn: ({ run, ids }: { run: number; ids?: number[] }) => repairReconciliation(run, ids),
    onSuccess: (result) => {
      setOutcome({
        ok: true,
        text: `Repaired ${plural(result.repaired, 'discrepancy', 'discrepancies')}.`,
      });
      refresh();
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });
  const busy = start.isPending || repair.isPending;
  const run = latest.data?.results[0];
  const open = run?.discrepancies.filter((d) => d.repair && !d.repaired_at) ?? [];

  return (
    <section className="dash-section" aria-labelledby="reconciliation-heading">
      <h2 id="reconciliation-heading">Reconciliation</h2>
      <div className="toolbar">
        <label className="check">
          <input
            type="checkbox"
            checked={full}
            onChange={(event) => setFull(event.target.checked)}
          />
          <span>Full (read every volume)</span>
        </label>
        <button
          type="button"
          className="button button--small"
          disabled={busy}
          onClick={() => {
            setOutcome(null);
            start.mutate({ full });
          }}
        >
          Run reconciliation
        </button>
        {run && (
          <button
            type="button"
            className="button button--small"
            disabled={busy || open.length === 0}
            onClick={() => {
              setOutcome(null);
              repair.mutate({ run: run.id });
            }}
          >
            Repair all ({open.length})
          </button>
        )}
      </div>
      <OutcomeNotice outcome={outcome} />
      <Loaded query={latest} what="the latest reconciliation">
        {(page) => {
          const shown = page.results[0];
          return shown ? (
            <RunReport
              run={shown}
              busy={busy}
              onRepair={(id) => {
                setOutcome(null);
                repair.mutate({ run: shown.id, ids: [id] });
              }}
            />
          ) : (
            <div className="status status--empty">
              <p className="status__title">No reconciliation yet</p>
            </div>
          );
        }}
      </Loaded>
    </section>
  );
}

function RunReport({
  run,
  busy,
  onRepair,
}: {
  run: Reconciliation;
  busy: boolean;
  onRepair: (id: number) => void;
}) {
  const when = run.finished_at ?? run.started_at ?? run.created_at;
  const scope = run.scope === 'full' ? 'full' : `sample of ${run.sample ?? '?'}`;
  const columns: Column<Discrepancy>[] = [
    { label: 'Kind', rowHeader: true, cell: (d) => d.kind },
    {
      label: 'Objects',
      className: 'mono wrap',
      cell: (d) =>
        [
          d.volume && `volume ${d.volume}`,
          d.file !== null && `file ${d.file_name ?? d.file}`,
          d.copy !== null && `copy #${d.copy}`,
          d.request !== null && `request #${d.request}`,
        ]
          .filter(Boolean)
          .join(' · ') || '—',
    },
    { label: 'Detail', className: 'wrap', cell: (d) => d.detail },
    {
      label: 'Repair',
      className: 'wrap',
      cell: (d) =>
        d.repaired_at ? (
          `Repaired: ${d.outcome}`
        ) : d.repair ? (
          d.repair
        ) : remedy(d.actions, 'repair')?.possible === false ? (
          <WhyNot actions={d.actions} />
        ) : (
          'Report only (no safe repair)'
        ),
    },
    {
      label: 'Action',
      header: 'hidden',
      cell: (d) =>
        d.repair && !d.repaired_at ? (
          <button
            type="button"
            className="button button--small"
            disabled={busy}
            onClick={() => onRepair(d.id)}
            aria-label={`Repair discrepancy ${d.id}`}
          >
            Repair
          </button>
        ) : null,
    },
  ];
  return (
    <>
      <p>
        Run #{run.id} ({scope}) · {run.state} · {formatDateTime(when)} · read{' '}
        {plural(run.volumes_read, 'volume', 'volumes')}, {plural(run.copies_read, 'copy', 'copies')}{' '}
        and {plural(run.cache_files_read, 'cached file', 'cached files')} ·{' '}
        <strong>{plural(run.discrepancy_count, 'discrepancy', 'discrepancies')}</strong>
      </p>
      {run.error && <p className="notice notice--error">{run.error}</p>}
      {run.by_kind.length > 0 && (
        <ul className="reconciliation-kinds" aria-label="Discrepancies by kind">
          {run.by_kind.map((k) => (
            <li key={k.kind}>
              {k.kind}: {k.count}
              {k.repaired ? ` (${k.repaired} repaired)` : ''}
            </li>
          ))}
        </ul>
      )}
      {run.notes.length > 0 && (
        <section className="reconciliation-notes" aria-labelledby="reconciliation-notes-heading">
          <h3 id="reconciliation-notes-heading">Notes (nothing wrong, not counted)</h3>
          {run.notes.map((note) => (
            <NoteReport key={`${note.kind}-${note.volume}`} note={note} />
          ))}
        </section>
      )}
      {run.discrepancies.length > 0 && (
        <DataTable
          columns={columns}
          rows={run.discrepancies}
          rowKey={(d) => d.id}
          caption={`Discrepancies of reconciliation #${run.id}${
            run.discrepancies.length < run.discrepancy_count
              ? ` (the first ${run.discrepancies.length}; “Repair all” covers the rest)`
              : ''
          }`}
        />
      )}
    </>
  );
}

/** A note: its sentence, and what the bytes past a volume's end of data are (the first few). */
function NoteReport({ note }: { note: ReconciliationNote }) {
  const more = (note.members ?? 0) - note.listed.length;
  return (
    <div className="reconciliation-note">
      <p>{note.message}</p>
      {note.listed.length > 0 && (
        <details>
          <summary>
            What lies past the end of data on {note.volume}: {note.members} members,{' '}
            {formatBytes(note.member_bytes)}
          </summary>
          <ul aria-label={`Members past the end of data on ${note.volume}`}>
            {note.listed.map((m) => (
              <li key={m.position} className="mono wrap">
                byte {m.position}: {m.name} (granule {m.granule_id}, copy {m.copy},{' '}
                {formatBytes(m.size)})
              </li>
            ))}
            {more > 0 && <li>… and {more} more</li>}
          </ul>
        </details>
      )}
    </div>
  );
}
