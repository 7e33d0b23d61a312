import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';

import { CursorPager } from '../../components/CursorPager';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { EmptyState } from '../../components/StatusMessage';
import { ApiError, fieldErrors } from '../../lib/api/client';
import { consoleGranuleCountsQuery } from '../../lib/api/console/granuleCounts';
import { consoleGranulesQuery } from '../../lib/api/console/granules';
import { GRANULE_FILTERS, type GranuleFilters } from '../../lib/api/console/keys';
import type { ConsoleGranule, GranuleStateCounts } from '../../lib/api/types';
import { formatBytes, formatCount, formatDateTime, formatUtcRange } from '../../lib/format';
import { FilterForm } from './FilterForm';
import { IngestFailures } from './IngestFailures';
import { GRANULE_STATES, GranuleStateBadge } from './states';
import './consoleGranules.css';

function filtersOf(params: URLSearchParams): GranuleFilters {
  const filters: GranuleFilters = {};
  for (const name of GRANULE_FILTERS) {
    const value = params.get(name);
    if (value) filters[name] = value;
  }
  return filters;
}

/** The operator's granules across providers: filter, state counts, a paged table. */
export function GranulesPage() {
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const cursor = params.get('cursor');
  const granules = useQuery(consoleGranulesQuery(filters, cursor));
  const counts = useQuery(consoleGranuleCountsQuery(filters));
  const errors = granules.error instanceof ApiError ? fieldErrors(granules.error.errors) : {};

  const apply = (next: GranuleFilters, nextCursor: string | null = null) =>
    setParams({ ...next, ...(nextCursor ? { cursor: nextCursor } : {}) });
  const failed = (filters.state ?? '').split(',').includes('failed');

  return (
    <section className="dash-section" aria-labelledby="cg-heading">
      <h2 id="cg-heading">Granules</h2>
      <p className="dash-note">
        Every provider’s granules in every state. Ids take <code>*</code> and <code>?</code>.
      </p>
      <FilterForm key={params.toString()} filters={filters} errors={errors} onApply={apply} />
      {counts.data && (
        <StateChips
          counts={counts.data}
          chosen={filters.state}
          onChoose={(state) => apply({ ...filters, state })}
        />
      )}
      {failed && <IngestFailures filters={filters} />}
      {failed && <h3>Failed in the archive</h3>}
      <Loaded query={granules} what="the granules">
        {(page) =>
          page.results.length === 0 ? (
            <EmptyState title={failed ? 'No catalogued granule failed' : 'No granules match'}>
              <p>Loosen the filter, or clear it.</p>
            </EmptyState>
          ) : (
            <>
              <DataTable
                columns={COLUMNS}
                rows={page.results}
                rowKey={(granule) => granule.id}
                caption="Granules, newest ingested first"
                captionHidden
                busy={granules.isFetching}
              />
              <CursorPager
                page={page}
                label="Granule pages"
                onCursor={(next) => apply(filters, next)}
              />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

/** One chip per state with its count for the filter; choosing one narrows to it. */
function StateChips({
  counts,
  chosen,
  onChoose,
}: {
  counts: GranuleStateCounts;
  chosen: string | undefined;
  onChoose: (state: string | undefined) => void;
}) {
  return (
    <div className="cg-chips" role="group" aria-label="Granules per state">
      <button
        type="button"
        className="cg-chip"
        aria-pressed={!chosen}
        onClick={() => onChoose(undefined)}
      >
        all <span className="cg-chip__count">{formatCount(counts.total)}</span>
      </button>
      {GRANULE_STATES.map((state) => (
        <button
          type="button"
          key={state}
          className="cg-chip"
          aria-pressed={chosen === state}
          onClick={() => onChoose(chosen === state ? undefined : state)}
        >
          {state} <span className="cg-chip__count">{formatCount(counts.states[state] ?? 0)}</span>
        </button>
      ))}
    </div>
  );
}

const COLUMNS: Column<ConsoleGranule>[] = [
  {
    label: 'Granule',
    rowHeader: true,
    className: 'wrap',
    cell: (granule) => (
      <span className="cg-name">
        <Link to={`/dashboards/granules/${granule.id}`}>{granule.granule_id}</Link>
        <span className="muted small">
          {granule.collection}
          {granule.version > 1 ? ` · version ${granule.version}` : ''}
        </span>
      </span>
    ),
  },
  {
    label: 'State',
    className: 'wrap',
    cell: (granule) =>
      granule.failure ? (
        <>
          <GranuleStateBadge state="failed" />{' '}
          <span className="muted small">(still {granule.state})</span>
          <br />
          <span className="small">{granule.failure}</span>
        </>
      ) : (
        <GranuleStateBadge state={granule.state} />
      ),
  },
  { label: 'Provider', cell: (granule) => granule.provider ?? '—' },
  {
    label: 'Data time',
    className: 'wrap',
    cell: (granule) => formatUtcRange(granule.temporal_start, granule.temporal_end),
  },
  { label: 'Size', numeric: true, cell: (granule) => formatBytes(granule.total_size) },
  { label: 'Ingested', cell: (granule) => formatDateTime(granule.created_at) },
  { label: 'Archived', cell: (granule) => formatDateTime(granule.archived_at) },
];
