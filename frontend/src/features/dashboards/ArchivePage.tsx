import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { bucketBoardQuery } from '../../lib/api/archive/bucketBoard';
import { cacheQuery } from '../../lib/api/archive/cache';
import { drivesQuery, varyDrive } from '../../lib/api/archive/drives';
import { archiveKeys } from '../../lib/api/archive/keys';
import { archiveRequestsQuery } from '../../lib/api/archive/requests';
import { volumeGroupsQuery } from '../../lib/api/archive/volumeGroups';
import { volumesQuery, type VolumeList } from '../../lib/api/archive/volumes';
import type {
  ArchiveRequest,
  BucketFigures,
  BucketWork,
  CacheUsage,
  Drive,
  VolumeGroup,
} from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { StateBadge } from '../../components/StateBadge';
import {
  formatBytes,
  formatCount,
  formatDateTime,
  formatNumber,
  formatPercent,
  formatUtc,
} from '../../lib/format';
import { HistogramChart } from './charts/HistogramChart';
import { FaultList } from './FaultList';

export function ArchivePage() {
  const drives = useQuery(drivesQuery());
  const cache = useQuery(cacheQuery());
  const volumes = useQuery(volumesQuery());
  const groups = useQuery(volumeGroupsQuery());
  const buckets = useQuery(bucketBoardQuery());
  const repacks = useQuery(archiveRequestsQuery('done', 'repack'));

  return (
    <section className="page" aria-labelledby="archive-heading">
      <div className="page__header">
        <h1 id="archive-heading">Archive</h1>
        <p className="page__lead">
          Silos and drives, the object store, the RAID cache, and the tape volumes.
        </p>
      </div>

      <section className="dash-section" aria-labelledby="drives-heading">
        <h2 id="drives-heading">Drives</h2>
        <Loaded query={drives} what="the drives">
          {(data) => <DriveBoard drives={data} />}
        </Loaded>
      </section>

      <section className="dash-section" aria-labelledby="objects-heading">
        <h2 id="objects-heading">Object store</h2>
        <Loaded query={buckets} what="the object store">
          {(data) => <BucketTable buckets={data} />}
        </Loaded>
      </section>

      <section className="dash-section" aria-labelledby="cache-heading">
        <h2 id="cache-heading">RAID cache</h2>
        <Loaded query={cache} what="the cache">
          {(data) => <CacheGauge cache={data} />}
        </Loaded>
      </section>

      <section className="dash-section" aria-labelledby="volumes-heading">
        <h2 id="volumes-heading">Volumes</h2>
        <Loaded query={groups} what="the volume groups">
          {(data) => <GroupTable groups={data} />}
        </Loaded>
        <Loaded query={volumes} what="the volumes">
          {(data) => (
            <>
              <VolumeSummary list={data} />
              <VolumeFaults list={data} />
            </>
          )}
        </Loaded>
      </section>

      <section className="dash-section" aria-labelledby="history-heading">
        <h2 id="history-heading">History: repacks and drive faults</h2>
        <Loaded query={repacks} what="the finished repacks">
          {(page) => <RepackTable repacks={page.results} />}
        </Loaded>
        <Loaded query={drives} what="the drives">
          {(data) => <DriveFaults drives={data} />}
        </Loaded>
      </section>
    </section>
  );
}

function bySilo(drives: Drive[]): [string, Drive[]][] {
  const silos = new Map<string, Drive[]>();
  for (const drive of drives) {
    const list = silos.get(drive.silo) ?? [];
    list.push(drive);
    silos.set(drive.silo, list);
  }
  return [...silos.entries()];
}

function DriveBoard({ drives }: { drives: Drive[] }) {
  const queryClient = useQueryClient();
  // each drive its own reason: one shared field sent whatever was typed last to any drive
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const vary = useMutation({
    mutationFn: ({ drive, online }: { drive: Drive; online: boolean }) =>
      varyDrive(
        drive.name,
        online,
        online ? '' : reasons[drive.name]?.trim() || 'Varied off from the archive board',
      ),
    onSuccess: (updated, { online }) => {
      if (!online) setReasons((old) => ({ ...old, [updated.name]: '' }));
      queryClient.setQueryData(drivesQuery().queryKey, (old: Drive[] | undefined) =>
        old?.map((drive) => (drive.name === updated.name ? updated : drive)),
      );
      setOutcome({
        ok: true,
        text: `${updated.name} varied ${online ? 'on' : 'off'}: now ${updated.state}.`,
      });
      void queryClient.invalidateQueries({ queryKey: archiveKeys.all });
    },
    onError: (error, { drive, online }) => {
      setOutcome({
        ok: false,
        text: `Could not vary ${drive.name} ${online ? 'on' : 'off'}: ${error.message}`,
      });
    },
  });

  if (drives.length === 0) return <p>No drives are configured.</p>;

  const columns: Column<Drive>[] = [
    {
      label: 'Drive',
      rowHeader: true,
      cell: (drive) => (
        <span>
          <span className="mono">{drive.name}</span>
          <span className="muted small"> {drive.model}</span>
        </span>
      ),
    },
    {
      label: 'State',
      cell: (drive) => (
        <span>
          <span className={`badge badge--state badge--${drive.state}`}>{drive.state}</span>
          {drive.mode && drive.mounted_volume && <span className="muted small"> {drive.mode}</span>}
        </span>
      ),
    },
    { label: 'Mounted volume', className: 'mono', cell: (drive) => drive.mounted_volume ?? '—' },
    { label: 'Volume group', cell: (drive) => drive.volume_group ?? '—' },
    { label: 'KB/s', numeric: true, cell: (drive) => formatNumber(drive.current_rate_b_s / 1000) },
    { label: 'Note', cell: (drive) => drive.offline_reason || drive.last_error || '—' },
    {
      label: 'Vary',
      header: 'hidden',
      cell: (drive) => {
        const offline = drive.state === 'offline';
        return (
          <span className="vary">
            {!offline && (
              <input
                type="text"
                className="vary__reason"
                aria-label={`Reason to vary ${drive.name} off`}
                placeholder="reason, e.g. cleaning"
                value={reasons[drive.name] ?? ''}
                onChange={(event) =>
                  setReasons((old) => ({ ...old, [drive.name]: event.target.value }))
                }
              />
            )}
            <button
              type="button"
              className={offline ? 'button button--small' : 'button button--small button--quiet'}
              onClick={() => vary.mutate({ drive, online: offline })}
              disabled={vary.isPending && vary.variables?.drive.name === drive.name}
              aria-label={`Vary ${drive.name} ${offline ? 'on' : 'off'}`}
            >
              {offline ? 'Vary on' : 'Vary off'}
            </button>
          </span>
        );
      },
    },
  ];

  return (
    <>
      <p className="dash-note">
        Varying a drive off records the reason typed beside it (each drive its own).
      </p>
      <OutcomeNotice outcome={outcome} />
      {bySilo(drives).map(([silo, list]) => (
        <DataTable
          key={silo}
          columns={columns}
          rows={list}
          rowKey={(drive) => drive.name}
          rowProps={(drive) => ({ 'data-drive': drive.name })}
          caption={`Silo ${silo}: ${list.filter((d) => d.state !== 'offline').length} of ${list.length} drives online`}
        />
      ))}
    </>
  );
}

function waiting(work: BucketWork | undefined): string {
  if (!work || work.queued + work.running === 0) return '—';
  return `${formatCount(work.queued)} queued · ${formatCount(work.running)} running (${formatBytes(work.queued_bytes + work.running_bytes)})`;
}

const BUCKET_COLUMNS: Column<BucketFigures>[] = [
  {
    label: 'Bucket',
    rowHeader: true,
    cell: (b) => (
      <span>
        {b.name}
        <span className="muted small mono">
          {' '}
          {b.store}: {b.bucket}
          {b.prefix && `/${b.prefix}`}
        </span>
      </span>
    ),
  },
  {
    label: 'Health',
    className: 'wrap',
    cell: (b) =>
      b.health.ok ? (
        <StateBadge tone="ok">up</StateBadge>
      ) : (
        <span>
          <StateBadge tone="bad">down</StateBadge> {b.health.reason}
        </span>
      ),
  },
  { label: 'Objects', numeric: true, cell: (b) => formatCount(b.objects) },
  { label: 'Held', numeric: true, cell: (b) => formatBytes(b.bytes) },
  { label: 'Puts waiting', cell: (b) => waiting(b.work.find((w) => w.kind === 'migrate')) },
  { label: 'Gets waiting', cell: (b) => waiting(b.work.find((w) => w.kind === 'recall')) },
  {
    label: 'Puts, last hour',
    numeric: true,
    cell: (b) => `${formatCount(b.last_hour.puts)} · ${formatBytes(b.last_hour.put_bytes)}`,
  },
  {
    label: 'Gets, last hour',
    numeric: true,
    cell: (b) => `${formatCount(b.last_hour.gets)} · ${formatBytes(b.last_hour.get_bytes)}`,
  },
  {
    label: 'Failures',
    className: 'wrap',
    cell: (b) =>
      b.failures.requests === 0 ? (
        '—'
      ) : (
        <span>
          {formatCount(b.failures.requests)}: {b.failures.last_error}
          <span className="muted small"> {formatDateTime(b.failures.last_error_at)}</span>
        </span>
      ),
  },
];

/** The object tier beside the silos: per bucket what it holds, its work, transfers, health. */
function BucketTable({ buckets }: { buckets: BucketFigures[] }) {
  const up = buckets.filter((b) => b.health.ok).length;
  return (
    <DataTable
      columns={BUCKET_COLUMNS}
      rows={buckets}
      rowKey={(b) => b.name}
      rowProps={(b) => ({ 'data-bucket': b.name })}
      caption={`Buckets: ${up} of ${buckets.length} answering`}
      empty={<p className="dash-note">No bucket is configured: every copy goes to tape.</p>}
    />
  );
}

function CacheGauge({ cache }: { cache: CacheUsage }) {
  const capacity = cache.capacity_bytes || 1;
  const pct = (bytes: number) => (100 * bytes) / capacity;
  // Pinned bytes are part of the dirty or clean bytes; draw them as their own band out of clean.
  const pinned = Math.min(cache.pinned_bytes, cache.used_bytes);
  const dirty = Math.min(cache.dirty_bytes, cache.used_bytes);
  const clean = Math.max(0, cache.used_bytes - dirty - pinned);
  const usedPct = pct(cache.used_bytes);
  const summary =
    `${formatBytes(cache.used_bytes)} of ${formatBytes(cache.capacity_bytes)} used (${formatPercent(usedPct)}): ` +
    `${formatBytes(cache.dirty_bytes)} dirty, ${formatBytes(cache.pinned_bytes)} pinned, ` +
    `${formatBytes(cache.free_bytes)} free. Purge starts at ${formatPercent(cache.high_watermark * 100)} ` +
    `and stops at ${formatPercent(cache.low_watermark * 100)}.`;
  return (
    <div className="cache">
      <div
        className="gauge"
        role="meter"
        aria-label="Cache used"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(usedPct * 100) / 100}
        aria-valuetext={summary}
      >
        <div className="gauge__band gauge__band--dirty" style={{ width: `${pct(dirty)}%` }} />
        <div className="gauge__band gauge__band--pinned" style={{ width: `${pct(pinned)}%` }} />
        <div className="gauge__band gauge__band--clean" style={{ width: `${pct(clean)}%` }} />
        <div
          className="gauge__mark"
          style={{ left: `${cache.low_watermark * 100}%` }}
          title="Low watermark"
        />
        <div
          className="gauge__mark gauge__mark--high"
          style={{ left: `${cache.high_watermark * 100}%` }}
          title="High watermark"
        />
      </div>
      <div className="gauge__scale" aria-hidden="true">
        <span style={{ left: `${cache.low_watermark * 100}%` }}>
          low {formatPercent(cache.low_watermark * 100)}
        </span>
        <span style={{ left: `${cache.high_watermark * 100}%` }}>
          high {formatPercent(cache.high_watermark * 100)}
        </span>
      </div>
      <p className="dash-note">{summary}</p>
      <dl className="figures figures--legend">
        <div>
          <dt>Total</dt>
          <dd>{formatBytes(cache.capacity_bytes)}</dd>
        </div>
        <div>
          <dt>
            <span className="swatch swatch--dirty" aria-hidden="true" /> Dirty
          </dt>
          <dd>{formatBytes(cache.dirty_bytes)}</dd>
        </div>
        <div>
          <dt>
            <span className="swatch swatch--pinned" aria-hidden="true" /> Pinned
          </dt>
          <dd>{formatBytes(cache.pinned_bytes)}</dd>
        </div>
        <div>
          <dt>
            <span className="swatch swatch--clean" aria-hidden="true" /> Clean
          </dt>
          <dd>{formatBytes(cache.clean_bytes)}</dd>
        </div>
        <div>
          <dt>
            <span className="swatch swatch--free" aria-hidden="true" /> Free
          </dt>
          <dd>{formatBytes(cache.free_bytes)}</dd>
        </div>
      </dl>
    </div>
  );
}

const GROUP_COLUMNS: Column<VolumeGroup>[] = [
  { label: 'Group', rowHeader: true, cell: (group) => group.name },
  { label: 'Role', cell: (group) => group.role },
  { label: 'Silo', cell: (group) => group.silo },
  { label: 'Volumes', numeric: true, cell: (group) => formatCount(group.volumes) },
  { label: 'Used', numeric: true, cell: (group) => formatBytes(group.used_bytes) },
  { label: 'Capacity', numeric: true, cell: (group) => formatBytes(group.capacity_bytes) },
  { label: '% full', numeric: true, cell: (group) => formatPercent(group.percent_full) },
];

function GroupTable({ groups }: { groups: VolumeGroup[] }) {
  return (
    <DataTable
      columns={GROUP_COLUMNS}
      rows={groups}
      rowKey={(group) => group.name}
      caption="Volume groups"
      empty={<p>No volume groups.</p>}
    />
  );
}

const STATE_COLUMNS: Column<{ state: string; n: number; total: boolean }>[] = [
  { label: 'State', rowHeader: true, cell: (row) => row.state },
  { label: 'Volumes', numeric: true, cell: (row) => formatCount(row.n) },
];

function VolumeSummary({ list }: { list: VolumeList }) {
  const counts = new Map<string, number>();
  for (const volume of list.volumes) counts.set(volume.state, (counts.get(volume.state) ?? 0) + 1);
  const used = list.volumes.filter((volume) => volume.state !== 'scratch');
  return (
    <div className="chart-grid">
      <DataTable
        columns={STATE_COLUMNS}
        rows={[
          ...[...counts.entries()].map(([state, n]) => ({ state, n, total: false })),
          { state: 'all', n: list.volumes.length, total: true },
        ]}
        rowKey={(row) => (row.total ? '(all)' : row.state)}
        rowProps={(row) => (row.total ? { className: 'total' } : {})}
        caption={`Volumes by state${list.truncated ? ` (first ${list.volumes.length} only)` : ''}`}
        cards={false}
      />
      <HistogramChart
        title="% full of volumes in use (not scratch)"
        values={used.map((volume) => volume.percent_full)}
      />
    </div>
  );
}

/** Volumes a fault took out of writing or reading (a write-protected cartridge, a suspect
 * volume), with the reason the archive recorded. */
function VolumeFaults({ list }: { list: VolumeList }) {
  const faults = list.volumes
    .filter((volume) => volume.state_reason)
    .map((volume) => ({ name: volume.label, state: volume.state, reason: volume.state_reason }));
  return <FaultList title="Volumes out of service" label="Volume faults" faults={faults} />;
}

const REPACK_COLUMNS: Column<ArchiveRequest>[] = [
  { label: 'Repack', rowHeader: true, cell: (request) => `#${request.id}` },
  { label: 'Volume', className: 'mono', cell: (request) => request.volume ?? '—' },
  { label: 'Live bytes moved', numeric: true, cell: (request) => formatBytes(request.bytes_total) },
  { label: 'Started', cell: (request) => formatUtc(request.started_at ?? request.created_at) },
  { label: 'Finished', cell: (request) => formatUtc(request.finished_at) },
];

/** Finished repacks: each emptied a volume onto others of its group and recycled it. */
function RepackTable({ repacks }: { repacks: ArchiveRequest[] }) {
  return (
    <DataTable
      columns={REPACK_COLUMNS}
      rows={repacks}
      rowKey={(request) => String(request.id)}
      caption="Finished repacks"
      empty={<p>No volume has been repacked yet.</p>}
    />
  );
}

/** Drives out of service or failing, with what the operator or the mover recorded. */
function DriveFaults({ drives }: { drives: Drive[] }) {
  const faults = drives
    .filter((drive) => drive.state === 'offline' || drive.last_error)
    .map((drive) => ({
      name: drive.name,
      state: drive.state,
      reason: drive.offline_reason || drive.last_error,
    }));
  return (
    <FaultList
      title="Drives offline or failing"
      label="Drive faults"
      faults={faults}
      empty={<p className="dash-note">No drive is offline or failing.</p>}
    />
  );
}
