import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';

import { setStagePriority } from '../../lib/api/stage/stagePriority';
import { cancelStageRequest } from '../../lib/api/stage/stageCancel';
import { stageKeys } from '../../lib/api/stage/keys';
import { stageRequestsQuery } from '../../lib/api/stage/stageRequests';
import type { StagePriority, StageRequest } from '../../lib/api/types';
import { type Column, DataTable } from '../../components/DataTable';
import { ErrorMessage } from '../../components/StatusMessage';
import { formatCount, formatDateTime, formatEta } from '../../lib/format';

const PRIORITIES: { value: StagePriority; label: string }[] = [
  { value: 0, label: 'High' },
  { value: 1, label: 'Normal' },
  { value: 2, label: 'Low' },
];

/** Bulk stage requests (the WLCG Tape REST API's, from grid clients) beside the orders: who
 * asked, their files by state, the ETA and the bound by which every file is final, mounts
 * planned; operators change the priority. */
export function StageRequests({ operator }: { operator: boolean }) {
  const stages = useQuery(stageRequestsQuery());
  if (stages.isPending || (stages.data?.results.length ?? 0) === 0) return null;
  if (stages.isError && !stages.data)
    return (
      <ErrorMessage
        title="Could not load the stage requests"
        detail={stages.error.message}
        error={stages.error}
        onRetry={() => void stages.refetch()}
      />
    );
  return (
    <section className="stage-requests" aria-labelledby="stage-heading">
      <h2 id="stage-heading">Bulk stage requests</h2>
      <p className="page__lead">
        Files grid clients asked to have on disk through the Tape REST API. They are recalled with
        the orders, volume by volume.
      </p>
      <DataTable
        columns={columns(operator)}
        rows={stages.data.results}
        rowKey={(stage) => stage.id}
        caption="Bulk stage requests, newest first"
        captionHidden
      />
    </section>
  );
}

/** "9,000 done, 1,000 waiting, 2 failed": the files by state, leaving out empty states. */
function stateCounts(stage: StageRequest): string {
  const c = stage.counts;
  const parts = [
    c.COMPLETED && `${formatCount(c.COMPLETED)} done`,
    c.SUBMITTED + c.STARTED && `${formatCount(c.SUBMITTED + c.STARTED)} waiting`,
    c.FAILED && `${formatCount(c.FAILED)} failed`,
    c.CANCELLED && `${formatCount(c.CANCELLED)} cancelled`,
  ];
  return parts.filter(Boolean).join(', ');
}

function columns(operator: boolean): Column<StageRequest>[] {
  return [
    {
      label: 'Request',
      rowHeader: true,
      cell: (stage) => <code title={stage.id}>{stage.id.slice(0, 8)}</code>,
    },
    { label: 'Who', cell: (stage) => stage.user },
    { label: 'Placed', cell: (stage) => formatDateTime(stage.created_at) },
    { label: 'Files', numeric: true, cell: (stage) => formatCount(stage.file_count) },
    { label: 'State', cell: (stage) => stateCounts(stage) || '—' },
    {
      // every file is COMPLETED or FAILED with its reason by the bound: a request never hangs
      label: 'ETA (final by)',
      cell: (stage) =>
        stage.completed_at ? (
          'done'
        ) : (
          <>
            {formatEta(stage.eta_s)}
            {stage.bound_at && <small> (by {formatDateTime(stage.bound_at)})</small>}
          </>
        ),
    },
    {
      label: 'Mounts planned',
      numeric: true,
      cell: (stage) => (stage.completed_at ? '—' : formatCount(stage.volumes_planned)),
    },
    { label: 'Priority', cell: (stage) => <StageActions stage={stage} operator={operator} /> },
  ];
}

function StageActions({ stage, operator }: { stage: StageRequest; operator: boolean }) {
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: stageKeys.all });
  const priority = useMutation({
    mutationFn: (value: StagePriority) => setStagePriority(stage.id, value),
    onSuccess: refresh,
  });
  const cancel = useMutation({
    mutationFn: () => cancelStageRequest(stage.id),
    onSuccess: refresh,
  });
  const label = PRIORITIES.find((p) => p.value === stage.priority)?.label ?? stage.priority;
  const open = stage.completed_at === null;
  return (
    <div className="actions">
      {operator && open ? (
        <select
          aria-label={`Priority of stage request ${stage.id.slice(0, 8)}`}
          value={stage.priority}
          disabled={priority.isPending}
          onChange={(event) => priority.mutate(Number(event.target.value) as StagePriority)}
        >
          {PRIORITIES.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
        </select>
      ) : (
        <span>{label}</span>
      )}
      {open && (
        <button
          type="button"
          className="button button--quiet"
          disabled={cancel.isPending}
          onClick={() => cancel.mutate()}
        >
          Cancel
        </button>
      )}
      {(priority.error ?? cancel.error) && (
        <span role="alert">{(priority.error ?? cancel.error)?.message}</span>
      )}
    </div>
  );
}
