import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';

import { CursorPager } from '../../components/CursorPager';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { StateBadge } from '../../components/StateBadge';
import { bulkJobsQuery } from '../../lib/api/bulk/jobs';
import type { BulkJob } from '../../lib/api/types';
import { formatBytes, formatCount, formatDateTime } from '../../lib/format';
import { NewJobForm } from './NewJobForm';
import { Progress } from './Progress';
import { JOB_TONES, kindLabel, selectionText } from './words';
import './bulk.css';

const COLUMNS: Column<BulkJob>[] = [
  {
    label: 'Job',
    rowHeader: true,
    cell: (job) => <Link to={`/dashboards/bulk/${job.id}`}>#{job.id}</Link>,
  },
  { label: 'Action', cell: (job) => kindLabel(job.kind) },
  {
    label: 'State',
    cell: (job) => <StateBadge tone={JOB_TONES[job.state]}>{job.state}</StateBadge>,
  },
  { label: 'Progress', cell: (job) => <Progress job={job} /> },
  {
    label: 'Granules',
    numeric: true,
    cell: (job) =>
      `${formatCount(job.granules_total)} · ${formatBytes(job.bytes_total)}` +
      (job.counts.failed ? ` · ${formatCount(job.counts.failed)} failed` : ''),
  },
  { label: 'Selection', className: 'wrap', cell: (job) => selectionText(job) },
  {
    label: 'Asked',
    className: 'wrap',
    cell: (job) => `${job.requested_by || 'system'}, ${formatDateTime(job.created_at)}`,
  },
  { label: 'Reason', className: 'wrap', cell: (job) => job.reason },
];

/** Bulk operations over granules: a new job (dry run first) and every job with its progress. */
export function BulkJobsPage() {
  const [cursor, setCursor] = useState<string | null>(null);
  const jobs = useQuery(bulkJobsQuery(cursor));
  return (
    <div className="bulk">
      <section className="dash-section" aria-labelledby="bulk-new-heading">
        <h2 id="bulk-new-heading">New bulk job</h2>
        <NewJobForm />
      </section>
      <section className="dash-section" aria-labelledby="bulk-jobs-heading">
        <h2 id="bulk-jobs-heading">Jobs</h2>
        <Loaded query={jobs} what="the bulk jobs">
          {(page) => (
            <>
              <DataTable
                columns={COLUMNS}
                rows={page.results}
                rowKey={(job) => job.id}
                labelledBy="bulk-jobs-heading"
                empty={
                  <div className="status status--empty">
                    <p className="status__title">No bulk job yet</p>
                  </div>
                }
              />
              <CursorPager page={page} label="Bulk job pages" onCursor={setCursor} />
            </>
          )}
        </Loaded>
      </section>
    </div>
  );
}
