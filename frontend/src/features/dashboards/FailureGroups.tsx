import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';

import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { canDo, remedy, WhyNot } from '../../components/Remedies';
import { archiveKeys } from '../../lib/api/archive/keys';
import { failureGroupsQuery } from '../../lib/api/console/failureGroups';
import { consoleKeys } from '../../lib/api/console/keys';
import { redeliverGroup } from '../../lib/api/console/redeliver';
import { retryGroup } from '../../lib/api/console/retryGroup';
import { ingestKeys } from '../../lib/api/ingest/keys';
import type { FailureGroup, FailureWhere, RetryGroupResult } from '../../lib/api/types';
import { formatDateTime } from '../../lib/format';

const WHERE: FailureWhere[] = ['ingest', 'archive', 'distribution'];

/** The words for one kind of work, singular and plural. */
const NOUNS: Record<string, [string, string]> = {
  granule: ['granule', 'granules'],
  order_item: ['order item', 'order items'],
  subscription_delivery: ['subscription delivery', 'subscription deliveries'],
};

export function itemsOf(kind: string, count: number): string {
  const [one, many] = NOUNS[kind] ?? [`${kind} request`, `${kind} requests`];
  return `${count} ${count === 1 ? one : many}`;
}

function describe(result: RetryGroupResult): string {
  const sent = `Sent ${itemsOf(result.kind, result.retried)} round again`;
  const left = result.not_retried.map((r) => (r.id === null ? r.reason : `#${r.id}: ${r.reason}`));
  return left.length ? `${sent}; not retried: ${left.join('; ')}.` : `${sent}.`;
}

/** Failed work grouped by the pattern of its reason, with one retry per group. */
export function FailureGroups() {
  const [where, setWhere] = useState<FailureWhere | ''>('');
  const whereId = useId();
  const groups = useQuery(failureGroupsQuery(where ? { where } : {}));
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const retry = useMutation({
    mutationFn: retryGroup,
    onSuccess: (result) => {
      setOutcome({ ok: true, text: describe(result) });
      setConfirming(null);
      for (const key of [consoleKeys.all, archiveKeys.all, ingestKeys.all]) {
        void queryClient.invalidateQueries({ queryKey: key });
      }
    },
    onError: (error) => {
      setOutcome({ ok: false, text: error.message });
      setConfirming(null);
    },
  });

  const columns: Column<FailureGroup>[] = [
    {
      label: 'Reason',
      rowHeader: true,
      className: 'wrap',
      cell: (group) => (
        <span className="failure-group__reason">
          <span className="mono">{group.pattern}</span>
          <span className="muted small">e.g. {group.example || '(no reason recorded)'}</span>
        </span>
      ),
    },
    { label: 'Where', cell: (group) => `${group.where} · ${group.kind.replace('_', ' ')}` },
    { label: 'Count', numeric: true, cell: (group) => group.count },
    {
      label: 'Collections',
      cell: (group) =>
        group.collections.length ? (
          <ul className="failure-group__collections">
            {group.collections.map((c) => (
              <li key={c.key}>
                {c.key} ({c.count})
              </li>
            ))}
          </ul>
        ) : (
          '—'
        ),
    },
    {
      label: 'Last seen',
      cell: (group) => (group.last_seen ? formatDateTime(group.last_seen) : '—'),
    },
    {
      label: 'Action',
      header: 'hidden',
      className: 'wrap',
      cell: (group) =>
        !canDo(group.actions, 'retry') ? (
          <NoRetry group={group} onOutcome={setOutcome} />
        ) : confirming === group.key ? (
          <span className="failure-group__confirm" role="group" aria-label="Confirm retrying">
            <span>Send {itemsOf(group.kind, group.count)} round again?</span>
            <button
              type="button"
              className="button button--small"
              disabled={retry.isPending}
              onClick={() => retry.mutate(group.key)}
            >
              {retry.isPending ? 'Retrying…' : 'Yes, retry'}
            </button>
            <button
              type="button"
              className="button button--small button--quiet"
              onClick={() => setConfirming(null)}
            >
              Keep
            </button>
          </span>
        ) : (
          <button
            type="button"
            className="button button--small failure-group__retry"
            disabled={retry.isPending}
            onClick={() => {
              setOutcome(null);
              setConfirming(group.key);
            }}
            aria-label={`Retry ${group.count}: ${group.pattern}`}
          >
            Retry {group.count}
          </button>
        ),
    },
  ];

  return (
    <section className="dash-section" aria-labelledby="failure-groups-heading">
      <h2 id="failure-groups-heading">Failures by reason</h2>
      <div className="toolbar">
        <div className="field field--inline">
          <label htmlFor={whereId}>Where</label>
          <select
            id={whereId}
            value={where}
            onChange={(event) => {
              setWhere(WHERE.find((w) => w === event.target.value) ?? '');
              setConfirming(null);
            }}
          >
            <option value="">everywhere</option>
            {WHERE.map((w) => (
              <option key={w} value={w}>
                {w}
              </option>
            ))}
          </select>
        </div>
      </div>
      <OutcomeNotice outcome={outcome} />
      <Loaded query={groups} what="the failures by reason">
        {(rows) => (
          <DataTable
            columns={columns}
            rows={rows}
            rowKey={(group) => group.key}
            caption="Failed work grouped by reason, the largest group first"
            captionHidden
            empty={
              <div className="status status--empty">
                <p className="status__title">Nothing has failed{where ? ` in ${where}` : ''}</p>
              </div>
            }
          />
        )}
      </Loaded>
    </section>
  );
}

/**
 * A group a retry cannot help: why not, and the redelivery that can (asked of the provider by
 * giving the archive's damaged work up, or left to the provider for ingest failures).
 */
function NoRetry({
  group,
  onOutcome,
}: {
  group: FailureGroup;
  onOutcome: (outcome: Outcome) => void;
}) {
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState(false);
  const [note, setNote] = useState('');
  const noteId = useId();
  const redeliver = remedy(group.actions, 'redeliver');
  const ask = useMutation({
    mutationFn: () => redeliverGroup(group.key, note.trim()),
    onSuccess: (result) => {
      const left = result.not_redelivered.map((r) => `granule ${r.id}: ${r.reason}`);
      onOutcome({
        ok: true,
        text:
          `Asked for ${result.granules} ${result.granules === 1 ? 'granule' : 'granules'} ` +
          `to be delivered again${left.length ? `; not asked: ${left.join('; ')}` : ''}.`,
      });
      setAsking(false);
      for (const key of [consoleKeys.all, archiveKeys.all, ingestKeys.all]) {
        void queryClient.invalidateQueries({ queryKey: key });
      }
    },
    onError: (error) => onOutcome({ ok: false, text: error.message }),
  });
  const askable = redeliver?.possible === true && group.where === 'archive';
  return (
    <div className="failure-group__none">
      <WhyNot actions={group.actions} />
      {redeliver?.possible && !askable && (
        <p className="small">The provider delivers it again: {redeliver.reason}.</p>
      )}
      {askable &&
        (asking ? (
          <span className="failure-group__confirm" role="group" aria-label="Confirm redelivery">
            <label htmlFor={noteId}>Note to the provider</label>
            <input
              id={noteId}
              type="text"
              value={note}
              maxLength={2000}
              onChange={(event) => setNote(event.target.value)}
            />
            <button
              type="button"
              className="button button--small"
              disabled={ask.isPending || !note.trim()}
              onClick={() => ask.mutate()}
            >
              Yes, ask for it again
            </button>
            <button
              type="button"
              className="button button--small button--quiet"
              onClick={() => setAsking(false)}
            >
              Keep
            </button>
          </span>
        ) : (
          <button
            type="button"
            className="button button--small"
            onClick={() => setAsking(true)}
            title={redeliver.reason}
          >
            Ask for redelivery
          </button>
        ))}
    </div>
  );
}
