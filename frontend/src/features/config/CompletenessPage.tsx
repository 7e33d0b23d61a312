import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';

import { completenessDayQuery } from '../../lib/api/completeness/day';
import { configCollectionsQuery } from '../../lib/api/config/collections';
import type { CompletenessDay, CompletenessGap, LateGranule } from '../../lib/api/types';
import { DataTable } from '../../components/DataTable';
import { Field } from '../../components/Field';
import { Loaded } from '../../components/Loaded';
import { WorstCollectionsPanel } from '../../components/WorstCollectionsPanel';
import { formatAge, formatCount, formatUtc } from '../../lib/format';
import { describeSeconds } from './collectionForm';

function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

/** A collection's UTC day against its cadence: what was expected, what came, what is missing. */
export function CompletenessPage() {
  const [params, setParams] = useSearchParams();
  const collections = useQuery(configCollectionsQuery());
  const withCadence = (collections.data ?? []).filter((c) => c.cadence_seconds != null);
  const collection = params.get('collection') ?? withCadence[0]?.key ?? '';
  const day = params.get('day') ?? todayUtc();
  const report = useQuery(completenessDayQuery(collection, day));
  const choose = (name: string, value: string) =>
    setParams({ collection, day, [name]: value }, { replace: true });

  return (
    <section className="page" aria-labelledby="completeness-heading">
      <div className="page__header">
        <h1 id="completeness-heading">Completeness</h1>
        <p className="page__lead">
          Granules expected by each collection’s cadence, the gaps where none came, and those
          archived later than the latency target.
        </p>
      </div>
      <div className="toolbar config-toolbar">
        <Field id="cp-collection" label="Collection">
          <select
            id="cp-collection"
            value={collection}
            onChange={(e) => choose('collection', e.target.value)}
          >
            {withCadence.length === 0 && <option value="">No collection declares a cadence</option>}
            {withCadence.map((c) => (
              <option key={c.key} value={c.key}>
                {c.key} (every {describeSeconds(c.cadence_seconds)})
              </option>
            ))}
          </select>
        </Field>
        <Field id="cp-day" label="Day (UTC)">
          <input
            id="cp-day"
            type="date"
            value={day}
            onChange={(e) => e.target.value && choose('day', e.target.value)}
          />
        </Field>
      </div>
      {collection !== '' && (
        <Loaded query={report} what="the completeness report">
          {(data) => <DayReport report={data} />}
        </Loaded>
      )}
      <section className="dash-section page-section" aria-labelledby="worst-heading">
        <h2 id="worst-heading">Worst over the last 7 days</h2>
        <WorstCollectionsPanel days={7} />
      </section>
    </section>
  );
}

function DayReport({ report }: { report: CompletenessDay }) {
  return (
    <>
      <dl className="config-figures" aria-label="The day in figures">
        <div>
          <dt>Expected</dt>
          <dd>{formatCount(report.expected)}</dd>
        </div>
        <div>
          <dt>Received</dt>
          <dd>{formatCount(report.received)}</dd>
        </div>
        <div>
          <dt>Missing</dt>
          <dd className={report.missing ? 'bad' : 'good'}>{formatCount(report.missing)}</dd>
        </div>
        <div>
          <dt>Late</dt>
          <dd>{report.late_count == null ? 'no target' : formatCount(report.late_count)}</dd>
        </div>
      </dl>
      <section className="page-section" aria-labelledby="gaps-heading">
        <h2 id="gaps-heading">Gaps</h2>
        <DataTable<CompletenessGap>
          caption="Gaps"
          captionHidden
          rows={report.gaps}
          rowKey={(row) => row.start}
          empty={<p className="good">No gap: every expected granule came.</p>}
          columns={[
            { label: 'From', rowHeader: true, cell: (row) => formatUtc(row.start) },
            { label: 'To', cell: (row) => formatUtc(row.end) },
            { label: 'Missing granules', numeric: true, cell: (row) => formatCount(row.missing) },
          ]}
        />
      </section>
      <section className="page-section" aria-labelledby="late-heading">
        <h2 id="late-heading">Late granules</h2>
        <DataTable<LateGranule>
          caption="Late granules"
          captionHidden
          rows={report.late}
          rowKey={(row) => row.granule_id}
          empty={
            <p>
              {report.late_count == null ? 'The collection sets no latency target.' : 'None late.'}
            </p>
          }
          columns={[
            {
              label: 'Granule',
              rowHeader: true,
              cell: (row) => row.granule_id,
              className: 'mono wrap',
            },
            { label: 'Ends', cell: (row) => formatUtc(row.temporal_end) },
            {
              label: 'Archived',
              cell: (row) => (row.archived_at ? formatUtc(row.archived_at) : 'not yet'),
            },
            { label: 'Late by', numeric: true, cell: (row) => formatAge(row.late_by_seconds) },
          ]}
        />
      </section>
    </>
  );
}
