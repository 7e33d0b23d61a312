import { useQuery } from '@tanstack/react-query';

import { queuesQuery } from '../../lib/api/archive/queues';
import type { QueueRow } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { formatAge, formatBytes, formatCount, formatPercent } from '../../lib/format';

export function QueuesPage() {
  const queues = useQuery(queuesQuery());
  return (
    <section className="page" aria-labelledby="queues-heading">
      <div className="page__header">
        <h1 id="queues-heading">Queues</h1>
        <p className="page__lead">
          Migrate, recall, repack and audit work pending per volume group.
        </p>
      </div>
      <Loaded query={queues} what="the queues">
        {(rows) => <QueueTable rows={rows} />}
      </Loaded>
    </section>
  );
}

const COLUMNS: Column<QueueRow>[] = [
  {
    label: 'Kind / group',
    rowHeader: true,
    cell: (row) => (
      <span>
        {row.kind} <span className="muted">· {row.volume_group ?? 'no group'}</span>
      </span>
    ),
  },
  { label: 'Queued', numeric: true, cell: (row) => formatCount(row.queued) },
  { label: 'Queued bytes', numeric: true, cell: (row) => formatBytes(row.queued_bytes) },
  { label: 'Running', numeric: true, cell: (row) => formatCount(row.running) },
  { label: 'Oldest waiting', numeric: true, cell: (row) => formatAge(row.oldest_age_s) },
  {
    label: 'Running: % done',
    cell: (row) =>
      row.running_percent_done === null ? (
        <span className="muted">none running</span>
      ) : (
        <span className="progress-cell">
          <progress
            max={100}
            value={row.running_percent_done}
            aria-label={`${row.kind} ${row.volume_group ?? ''} running, percent done`}
          />
          {formatPercent(row.running_percent_done)}
        </span>
      ),
  },
];

function QueueTable({ rows }: { rows: QueueRow[] }) {
  return (
    <DataTable
      columns={COLUMNS}
      rows={rows}
      rowKey={(row) => `${row.kind}/${row.volume_group ?? ''}`}
      caption="Pending requests per kind and volume group"
      empty={
        <div className="status status--empty">
          <p className="status__title">Nothing is waiting</p>
          <p>Every migrate and recall request has been served.</p>
        </div>
      }
    />
  );
}
