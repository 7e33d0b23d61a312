import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';

import { CursorPager } from '../../components/CursorPager';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { WhyNot } from '../../components/Remedies';
import { ingestFailuresQuery } from '../../lib/api/console/ingestFailures';
import type { GranuleFilters } from '../../lib/api/console/keys';
import type { IngestFailure } from '../../lib/api/types';
import { formatDateTime } from '../../lib/format';

const COLUMNS: Column<IngestFailure>[] = [
  {
    label: 'Granule',
    rowHeader: true,
    className: 'wrap',
    cell: (f) => (
      <span className="cg-name">
        <span className="mono">{f.granule_id}</span>
        <span className="muted small">
          {f.collection} · {f.provider} · request {f.request}
        </span>
      </span>
    ),
  },
  {
    label: 'Why it failed',
    className: 'wrap',
    cell: (f) => (
      <>
        <span className="small">{f.disposition}</span>
        <br />
        {f.reason}
        <WhyNot actions={f.actions} only={['retry']} />
      </>
    ),
  },
  { label: 'Failed', cell: (f) => formatDateTime(f.failed_at) },
];

/**
 * The granules that failed in ingest before the catalog had them: the failed filter counts
 * them, and the Failures page groups them, so the failed list shows them too.
 */
export function IngestFailures({ filters }: { filters: GranuleFilters }) {
  const [cursor, setCursor] = useState<string | null>(null);
  const failures = useQuery(ingestFailuresQuery(filters, cursor));
  return (
    <section aria-labelledby="cg-ingest-failures-heading">
      <h3 id="cg-ingest-failures-heading">Failed in ingest, before the catalog had them</h3>
      <Loaded query={failures} what="the ingest failures">
        {(page) => (
          <>
            <DataTable
              columns={COLUMNS}
              rows={page.results}
              rowKey={(f) => f.id}
              labelledBy="cg-ingest-failures-heading"
              empty={<p className="dash-note">None.</p>}
            />
            <CursorPager page={page} label="Ingest failure pages" onCursor={setCursor} />
          </>
        )}
      </Loaded>
    </section>
  );
}
