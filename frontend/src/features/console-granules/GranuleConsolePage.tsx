import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';

import { type Column, DataTable } from '../../components/DataTable';
import { Facts } from '../../components/Facts';
import { Loaded } from '../../components/Loaded';
import { consoleGranuleQuery } from '../../lib/api/console/granule';
import type { ConsoleCopy, ConsoleFile, ConsoleGranulePage } from '../../lib/api/types';
import { formatBytes, formatDateTime, formatUtcRange } from '../../lib/format';
import { MEDIUM_NAMES } from '../../lib/media';
import { LifecycleActions } from './LifecycleActions';
import { ReleaseCache, Stopped } from './Remedy';
import { GranuleStateBadge } from './states';
import { Timeline } from './Timeline';
import './consoleGranules.css';

/** One granule as an operator sees it: files, cache, every copy, its history and actions. */
export function GranuleConsolePage() {
  const id = Number(useParams().id);
  const granule = useQuery({ ...consoleGranuleQuery(id), enabled: Number.isInteger(id) });
  return (
    <section className="dash-section" aria-labelledby="cg-granule-heading">
      <p>
        <Link to="/dashboards/granules">← Granules</Link>
      </p>
      <Loaded query={granule} what="the granule">
        {(page) => <GranuleView page={page} />}
      </Loaded>
    </section>
  );
}

function GranuleView({ page }: { page: ConsoleGranulePage }) {
  const g = page.granule;
  return (
    <>
      <div className="cg-page__head">
        <h2 id="cg-granule-heading">{g.granule_id}</h2>
        <GranuleStateBadge state={g.state} />
      </div>
      {page.retired_reason && (
        <p className="notice notice--error cg-retired">{page.retired_reason}</p>
      )}
      <Facts
        className="cg-facts"
        facts={[
          ['Collection', g.collection],
          ['Version', g.version],
          ['Provider', g.provider ?? '—'],
          ['Data time', formatUtcRange(g.temporal_start, g.temporal_end)],
          ['Size', formatBytes(g.total_size)],
          ['Ingested', formatDateTime(g.created_at)],
          ['Archived', formatDateTime(g.archived_at)],
        ]}
      />
      <Stopped page={page} />
      <LifecycleActions granule={g} />
      <ReleaseCache page={page} />
      <h3 id="cg-files-heading">Files and copies</h3>
      {page.files.map((file) => (
        <FileCopies key={file.id} file={file} />
      ))}
      <h3 id="cg-timeline-heading">Timeline</h3>
      <Timeline events={page.timeline} labelledBy="cg-timeline-heading" />
    </>
  );
}

function cacheText(file: ConsoleFile): string {
  if (!file.cache) return 'not in the cache';
  const pinned = file.cache.pinned ? ', pinned' : '';
  return `in the cache (${file.cache.state}${pinned}) since ${formatDateTime(file.cache.created_at)}`;
}

const COPY_COLUMNS: Column<ConsoleCopy>[] = [
  {
    label: 'Copy',
    rowHeader: true,
    cell: (c) => (c.segment ? `${c.copy_number}.${c.segment}` : String(c.copy_number)),
  },
  { label: 'Medium', cell: (c) => MEDIUM_NAMES[c.medium] },
  {
    label: 'Volume / bucket',
    cell: (c) =>
      c.medium === 'object' ? `bucket ${c.bucket}` : <span className="mono">{c.volume}</span>,
  },
  {
    label: 'Group / key',
    cell: (c) =>
      c.medium === 'object' ? <span className="mono wrap">{c.key}</span> : (c.volume_group ?? '—'),
  },
  {
    label: 'Position',
    numeric: true,
    cell: (c) => (c.position === null ? '—' : c.position.toLocaleString('en')),
  },
  { label: 'Length', numeric: true, cell: (c) => formatBytes(c.length) },
  { label: 'State', cell: (c) => c.state },
  { label: 'Written', cell: (c) => formatDateTime(c.written_at) },
  { label: 'Verified', cell: (c) => formatDateTime(c.verified_at) },
];

function FileCopies({ file }: { file: ConsoleFile }) {
  return (
    <div className="cg-file">
      <p>
        <strong className="mono">{file.name}</strong>{' '}
        <span className="muted">
          {file.role} · {formatBytes(file.size)} · {file.checksum_type} · {cacheText(file)}
        </span>
      </p>
      <DataTable
        columns={COPY_COLUMNS}
        rows={file.copies}
        rowKey={(c) => c.id}
        caption={`Copies of ${file.name}`}
        captionHidden
        empty={<p className="dash-note">No copy yet.</p>}
      />
    </div>
  );
}
