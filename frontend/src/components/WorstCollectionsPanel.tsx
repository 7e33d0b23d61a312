import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';

import { worstCollectionsQuery } from '../lib/api/completeness/worst';
import type { WorstCollection } from '../lib/api/types';
import { formatCount, formatPercent } from '../lib/format';
import { DataTable } from './DataTable';
import { Loaded } from './Loaded';

/** The collections missing the most expected granules lately (for the operators' boards). */
export function WorstCollectionsPanel({ days = 7 }: { days?: number }) {
  const worst = useQuery(worstCollectionsQuery(days));
  return (
    <Loaded query={worst} what="the completeness ranking">
      {(data) => (
        <DataTable<WorstCollection>
          caption={`Least complete collections, last ${data.days} days`}
          rows={data.collections}
          rowKey={(row) => row.collection}
          empty={
            <p className="muted">No collection with a cadence expected a granule in these days.</p>
          }
          columns={[
            {
              label: 'Collection',
              rowHeader: true,
              cell: (row) => (
                <Link to={`/config/completeness?collection=${encodeURIComponent(row.collection)}`}>
                  {row.collection}
                </Link>
              ),
            },
            { label: 'Missing', numeric: true, cell: (row) => formatCount(row.missing) },
            {
              label: 'Received',
              numeric: true,
              cell: (row) =>
                `${formatCount(row.received)} of ${formatCount(row.expected)} (${formatPercent(row.percent_received)})`,
            },
            {
              label: 'Late',
              numeric: true,
              cell: (row) => (row.late_count == null ? '—' : formatCount(row.late_count)),
            },
          ]}
        />
      )}
    </Loaded>
  );
}
