import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';

import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { archiveKeys } from '../../lib/api/archive/keys';
import { deadLettersQuery } from '../../lib/api/console/deadLetters';
import { consoleKeys } from '../../lib/api/console/keys';
import { replayDeadLetters } from '../../lib/api/console/replay';
import { ingestKeys } from '../../lib/api/ingest/keys';
import type { DeadLetter, DeadLetterKind, ReplayBody, ReplayResult } from '../../lib/api/types';
import { formatDateTime } from '../../lib/format';

const KINDS: DeadLetterKind[] = ['archive', 'ingest', 'order_item', 'event'];
const PAGE = 50;

const KIND_WORDS: Record<DeadLetterKind, string> = {
  archive: 'archive request',
  ingest: 'ingest granule',
  order_item: 'order item',
  event: 'event delivery',
};

const rowId = (row: Pick<DeadLetter, 'kind' | 'id'>) => `${row.kind}:${row.id}`;

function describe(result: ReplayResult): string {
  const sent = `Replayed ${result.replayed} dead ${result.replayed === 1 ? 'letter' : 'letters'}`;
  const left = result.not_replayed.map((r) => `${KIND_WORDS[r.kind]} #${r.id}: ${r.reason}`);
  return left.length ? `${sent}; not replayed: ${left.join('; ')}.` : `${sent}.`;
}

/** The ids of the chosen rows, per kind, as the replay wants them. */
function idsOf(chosen: string[]): NonNullable<ReplayBody['ids']> {
  const ids: Record<string, number[]> = {};
  for (const value of chosen) {
    const [kind = '', id] = value.split(':');
    (ids[kind] ??= []).push(Number(id));
  }
  return ids;
}

/** Work that used up its retries, and replaying it from a fresh count. */
export function DeadLetters() {
  const [kind, setKind] = useState<DeadLetterKind | ''>('');
  const [offset, setOffset] = useState(0);
  const kindId = useId();
  const dead = useQuery(deadLettersQuery({ kind, limit: PAGE, offset }));
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirmingAll, setConfirmingAll] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const replay = useMutation({
    mutationFn: replayDeadLetters,
    onSuccess: (result) => {
      setOutcome({ ok: true, text: describe(result) });
      setSelected(new Set());
      setConfirmingAll(false);
      for (const key of [consoleKeys.all, archiveKeys.all, ingestKeys.all]) {
        void queryClient.invalidateQueries({ queryKey: key });
      }
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });

  function run(body: ReplayBody) {
    setOutcome(null);
    replay.mutate(body);
  }

  function toggle(value: string) {
    setSelected((old) => {
      const next = new Set(old);
      if (next.has(value)) next.delete(value);
      else next.add(value);
      return next;
    });
  }

  const chosen = [...selected];
  const kindWords = kind ? `${KIND_WORDS[kind]} ` : '';
  return (
    <section className="dash-section" aria-labelledby="dead-letter-heading">
      <h2 id="dead-letter-heading">Dead letters</h2>
      <p className="muted">
        Work that used up its retries: archive requests tried the most times allowed, ingest
        granules whose worker stopped each time, pushes that never landed. A replay starts their
        count afresh. Subscription deliveries have no retry limit, so none is a dead letter.
      </p>
      <div className="toolbar">
        <div className="field field--inline">
          <label htmlFor={kindId}>Dead kind</label>
          <select
            id={kindId}
            value={kind}
            onChange={(event) => {
              setKind(KINDS.find((k) => k === event.target.value) ?? '');
              setOffset(0);
              setSelected(new Set());
            }}
          >
            <option value="">all kinds</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_WORDS[k]}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          className="button button--small"
          disabled={replay.isPending || chosen.length === 0}
          onClick={() => run({ ids: idsOf(chosen) })}
        >
          Replay selected ({chosen.length})
        </button>
        {!confirmingAll && (
          <button
            type="button"
            className="button button--small button--quiet"
            disabled={replay.isPending || !dead.data?.count}
            onClick={() => setConfirmingAll(true)}
          >
            Replay all {kindWords}dead letters
          </button>
        )}
      </div>
      {confirmingAll && (
        <div className="actions" role="group" aria-label="Confirm replaying">
          <span>
            Replay all {dead.data?.count ?? 0} {kindWords}dead letters?
          </span>
          <button
            type="button"
            className="button button--small"
            disabled={replay.isPending}
            onClick={() => run(kind ? { kind } : { all: true })}
          >
            Yes, replay
          </button>
          <button
            type="button"
            className="button button--small button--quiet"
            onClick={() => setConfirmingAll(false)}
          >
            Keep
          </button>
        </div>
      )}
      <OutcomeNotice outcome={outcome} />
      <Loaded query={dead} what="the dead letters">
        {(data) => (
          <>
            <DataTable
              columns={COLUMNS}
              rows={data.results}
              rowKey={rowId}
              caption={`Dead letters ${offset + 1}–${offset + data.results.length} of ${data.count}`}
              empty={
                <div className="status status--empty">
                  <p className="status__title">No {kindWords}dead letters</p>
                </div>
              }
              selection={{
                isSelected: (row) => selected.has(rowId(row)),
                onToggle: (row) => toggle(rowId(row)),
                label: (row) => `Select ${KIND_WORDS[row.kind]} ${row.id}`,
              }}
            />
            {(data.previous || data.next) && (
              <div className="actions">
                <button
                  type="button"
                  className="button button--small button--quiet"
                  disabled={!data.previous}
                  onClick={() => setOffset(Math.max(0, offset - PAGE))}
                >
                  Previous
                </button>
                <button
                  type="button"
                  className="button button--small button--quiet"
                  disabled={!data.next}
                  onClick={() => setOffset(offset + PAGE)}
                >
                  Next
                </button>
              </div>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

const COLUMNS: Column<DeadLetter>[] = [
  {
    label: 'Item',
    rowHeader: true,
    className: 'mono wrap',
    cell: (row) => (
      <span>
        {row.label} <span className="muted small">{KIND_WORDS[row.kind]}</span>
      </span>
    ),
  },
  { label: 'Collection', cell: (row) => row.collection ?? '—' },
  {
    label: 'Attempts',
    numeric: true,
    cell: (row) => `${row.attempts} (limit ${row.max_attempts})`,
  },
  { label: 'Reason', className: 'wrap', cell: (row) => row.reason || '—' },
  { label: 'Failed', cell: (row) => (row.at ? formatDateTime(row.at) : '—') },
];
