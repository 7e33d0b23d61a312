import { useQuery } from '@tanstack/react-query';

import { queuesQuery } from '../../api/archive/queues';
import type { QueueRow } from '../../api/types';
import { Loaded } from '../../components/Loaded';
import { formatAge, formatBytes, formatCount, formatPercent } from '../../lib/format';

export function QueuesPage() {
  const queues = useQuery(queuesQuery());
  return (
    <section className="page" aria-labelledby="queues-heading">
      <div className="page__header">
        <h1 id="queues-heading">Queues</h1>
        <p className="page__lead">Migrate, recall, repack and audit work pending per volume group.</p>
      </div>
      <Loaded query={queues} what="the queues">
        {(rows) => <QueueTable rows={rows} />}
      </Loaded>
    </section>
  );
}

function QueueTable({ rows }: { rows: QueueRow[] }) {
  if (rows.length === 0) {
    return (
      <div className="status status--empty">
        <p className="status__title">Nothing is waiting</p>
        <p>Every migrate and recall request has been served.</p>
      </div>
    );
  }
  return (
    <div className="table-card">
      <table className="data-table data-table--cards">
        <caption>Pending requests per kind and volume group</caption>
        <thead>
          <tr>
            <th scope="col">Kind / group</th>
            <th scope="col" className="numeric">Queued</th>
            <th scope="col" className="numeric">Queued bytes</th>
            <th scope="col" className="numeric">Running</th>
            <th scope="col" className="numeric">Oldest waiting</th>
            <th scope="col">Running: % done</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const done = row.running_percent_done;
            return (
              <tr key={`${row.kind}/${row.volume_group ?? ''}`}>
                <th scope="row" data-label="Kind / group">
                  <span>
                    {row.kind} <span className="muted">· {row.volume_group ?? 'no group'}</span>
                  </span>
                </th>
                <td data-label="Queued" className="numeric">{formatCount(row.queued)}</td>
                <td data-label="Queued bytes" className="numeric">{formatBytes(row.queued_bytes)}</td>
                <td data-label="Running" className="numeric">{formatCount(row.running)}</td>
                <td data-label="Oldest waiting" className="numeric">{formatAge(row.oldest_age_s)}</td>
                <td data-label="Running: % done">
                  {done === null ? (
                    <span className="muted">none running</span>
                  ) : (
                    <span className="progress-cell">
                      <progress max={100} value={done} aria-label={`${row.kind} ${row.volume_group ?? ''} running, percent done`} />
                      {formatPercent(done)}
                    </span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
