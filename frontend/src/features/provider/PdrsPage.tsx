import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';

import { pdrIsFinal, pdrsQuery } from '../../lib/api/ingest/pdrs';
import { idFromUrl, PROVIDER_REFRESH_MS } from '../../lib/api/ingest/requests';
import type { Pdr } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { CursorPager } from '../../components/CursorPager';
import { Loaded } from '../../components/Loaded';
import { EmptyState } from '../../components/StatusMessage';
import { formatDateTime } from '../../lib/format';
import { IngestStateBadge } from './IngestStates';

export function PdrsPage() {
  const [cursor, setCursor] = useState<string | null>(null);
  const pdrs = useQuery(pdrsQuery(cursor));
  const waiting = pdrs.data?.results.some((pdr) => !pdrIsFinal(pdr));
  return (
    <section className="page" aria-labelledby="pdrs-heading">
      <div className="page__header">
        <h1 id="pdrs-heading">PDRs</h1>
        <p className="page__lead">
          Product Delivery Records you sent, and Granary’s answers: a PDRD when a PDR was refused, a
          PAN once its granules are done.
        </p>
      </div>
      <Loaded query={pdrs} what="your PDRs">
        {(page) =>
          page.results.length === 0 && !cursor ? (
            <EmptyState title="No PDRs yet">
              <p>PDRs dropped in your staging area or sent to the API appear here.</p>
            </EmptyState>
          ) : (
            <>
              <PdrTable rows={page.results} />
              <CursorPager page={page} label="PDR pages" onCursor={setCursor} />
            </>
          )
        }
      </Loaded>
      {waiting && (
        <p className="hint">
          PDRs waiting for their PAN refresh every {PROVIDER_REFRESH_MS / 1000} seconds.
        </p>
      )}
    </section>
  );
}

const COLUMNS: Column<Pdr>[] = [
  {
    label: 'PDR',
    rowHeader: true,
    cell: (pdr) => (
      <Link to={`/provider/pdrs/${pdr.id}`} className="mono wrap">
        {pdr.name}
      </Link>
    ),
  },
  { label: 'State', cell: (pdr) => <IngestStateBadge state={pdr.state} /> },
  {
    label: 'Disposition',
    cell: (pdr) => (
      <span className="request-name">
        <span
          className={`mono small ${pdr.disposition && pdr.disposition !== 'SUCCESSFUL' ? 'bad' : ''}`}
        >
          {pdr.disposition || '—'}
        </span>
        {pdr.detail && <span className="small">{pdr.detail}</span>}
      </span>
    ),
  },
  {
    label: 'Request',
    cell: (pdr) => {
      const requestId = idFromUrl(pdr.request);
      return requestId === null ? (
        <span className="muted">none</span>
      ) : (
        <Link to={`/provider/requests/${requestId}`}>Request {requestId}</Link>
      );
    },
  },
  { label: 'Received', cell: (pdr) => formatDateTime(pdr.created_at) },
];

function PdrTable({ rows }: { rows: Pdr[] }) {
  return (
    <DataTable
      columns={COLUMNS}
      rows={rows}
      rowKey={(pdr) => pdr.id}
      caption="PDRs, newest first"
      captionHidden
    />
  );
}
