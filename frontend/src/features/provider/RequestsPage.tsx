import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';

import { ingestRequestsQuery, isFinal, PROVIDER_REFRESH_MS } from '../../lib/api/ingest/requests';
import type { IngestRequest } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { CursorPager } from '../../components/CursorPager';
import { Loaded } from '../../components/Loaded';
import { EmptyState } from '../../components/StatusMessage';
import { formatBytes, formatCount, formatDateTime } from '../../lib/format';
import { IngestStateBadge, PercentDone } from './IngestStates';

export function RequestsPage() {
  const [cursor, setCursor] = useState<string | null>(null);
  const requests = useQuery(ingestRequestsQuery({ cursor }));
  const running = requests.data?.results.some((request) => !isFinal(request));
  return (
    <section className="page" aria-labelledby="requests-heading">
      <div className="page__header">
        <h1 id="requests-heading">Ingest requests</h1>
        <p className="page__lead">
          What you delivered, how far each request got, and why a granule failed.
        </p>
      </div>
      <Loaded query={requests} what="your ingest requests">
        {(page) =>
          page.results.length === 0 && !cursor ? (
            <EmptyState title="No ingest requests yet">
              <p>
                Requests appear here when you submit them through the bulk API, a PDR or a drop
                folder.
              </p>
            </EmptyState>
          ) : (
            <>
              <RequestTable rows={page.results} />
              <CursorPager page={page} label="Ingest request pages" onCursor={setCursor} />
            </>
          )
        }
      </Loaded>
      {running && (
        <p className="hint">Running requests refresh every {PROVIDER_REFRESH_MS / 1000} seconds.</p>
      )}
    </section>
  );
}

const COLUMNS: Column<IngestRequest>[] = [
  {
    label: 'Request',
    rowHeader: true,
    cell: (request) => (
      <span className="request-name">
        <Link to={`/provider/requests/${request.id}`}>Request {request.id}</Link>
        <span className="muted small wrap">
          {request.way}
          {request.label ? ` · ${request.label}` : ''}
          {' · '}
          {request.provider}
        </span>
      </span>
    ),
  },
  { label: 'State', cell: (request) => <IngestStateBadge state={request.state} /> },
  {
    label: 'Done (bytes)',
    cell: (request) => (
      <PercentDone percent={request.percent_done} label={`Request ${request.id}, percent done`} />
    ),
  },
  {
    label: 'Granules',
    cell: (request) => (
      <>
        {formatCount(request.archived_count)} of {formatCount(request.granule_count)} archived
        {request.failed_count > 0 && (
          <span className="bad">, {formatCount(request.failed_count)} failed</span>
        )}
      </>
    ),
  },
  { label: 'Size', numeric: true, cell: (request) => formatBytes(request.bytes_total) },
  { label: 'Submitted', cell: (request) => formatDateTime(request.created_at) },
];

function RequestTable({ rows }: { rows: IngestRequest[] }) {
  return (
    <DataTable
      columns={COLUMNS}
      rows={rows}
      rowKey={(request) => request.id}
      caption="Ingest requests, newest first"
      captionHidden
    />
  );
}
