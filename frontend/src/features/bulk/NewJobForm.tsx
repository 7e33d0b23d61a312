import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';

import { Field } from '../../components/Field';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { volumeGroupsQuery } from '../../lib/api/archive/volumeGroups';
import { type BulkJobAsk, createBulkJob, dryRunBulkJob } from '../../lib/api/bulk/jobs';
import { bulkKeys } from '../../lib/api/bulk/keys';
import type { BulkDryRun, BulkJobKind } from '../../lib/api/types';
import { formatBytes, formatCount } from '../../lib/format';
import { KINDS } from './words';

/** The granule list's filters a job may take (the API refuses any other name). */
export const FILTERS: { name: string; label: string; placeholder?: string }[] = [
  { name: 'collection', label: 'Collection(s)', placeholder: 'MOD09GA.061, MOD10A1.061' },
  { name: 'state', label: 'State(s)', placeholder: 'archived' },
  { name: 'granule_id', label: 'Granule id (* and ? wildcards)', placeholder: 'MOD09GA.A2024*' },
  { name: 'provider', label: 'Provider(s)' },
  { name: 'created_from', label: 'Ingested from', placeholder: '2026-11-01' },
  { name: 'created_to', label: 'Ingested to', placeholder: '2026-11-30' },
  { name: 'start', label: 'Temporal from', placeholder: '2024-01-01' },
  { name: 'end', label: 'Temporal to', placeholder: '2024-12-31' },
];

type By = 'query' | 'ids';

/** Split pasted ids: one per line or comma; numbers stay numbers. */
function parseIds(text: string): (number | string)[] {
  return text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** A new job: kind, which granules (filters, pasted ids or a file), why; a dry run first says
 * how many granules and bytes, then the operator confirms. */
export function NewJobForm() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const groups = useQuery(volumeGroupsQuery());
  const [kind, setKind] = useState<BulkJobKind>('recall');
  const [by, setBy] = useState<By>('query');
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [idsText, setIdsText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [reason, setReason] = useState('');
  const [target, setTarget] = useState('');
  const [preview, setPreview] = useState<BulkDryRun | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const changed =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setPreview(null);
      setOutcome(null);
    };

  function ask(): BulkJobAsk {
    const base = { kind, reason, ...(kind === 'move' ? { target_group: target } : {}) };
    if (by === 'query') {
      const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v.trim()));
      return { ...base, query };
    }
    return file ? { ...base, file } : { ...base, ids: parseIds(idsText) };
  }

  const dryRun = useMutation({
    mutationFn: dryRunBulkJob,
    onSuccess: (answer) => setPreview(answer),
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });
  const create = useMutation({
    mutationFn: createBulkJob,
    onSuccess: (job) => {
      void queryClient.invalidateQueries({ queryKey: bulkKeys.all });
      void navigate(`/dashboards/bulk/${job.id}`);
    },
    onError: (error) => setOutcome({ ok: false, text: error.message }),
  });
  const busy = dryRun.isPending || create.isPending;

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    setOutcome(null);
    if (preview) create.mutate(ask());
    else dryRun.mutate(ask());
  }

  const hint = KINDS.find((k) => k.value === kind)?.hint;
  return (
    <form className="form-card bulk-form" onSubmit={onSubmit} aria-label="New bulk job">
      <div className="bulk-form__row">
        <Field id="bulk-kind" label="Action">
          <select
            id="bulk-kind"
            value={kind}
            onChange={(e) => changed(setKind)(e.target.value as BulkJobKind)}
          >
            {KINDS.map((k) => (
              <option key={k.value} value={k.value}>
                {k.label}
              </option>
            ))}
          </select>
        </Field>
        {kind === 'move' && (
          <Field id="bulk-target" label="Target volume group">
            <select
              id="bulk-target"
              value={target}
              onChange={(e) => changed(setTarget)(e.target.value)}
            >
              <option value="">Choose a group…</option>
              {(groups.data ?? []).map((g) => (
                <option key={g.name} value={g.name}>
                  {g.name} ({g.silo ?? 'no silo'})
                </option>
              ))}
            </select>
          </Field>
        )}
      </div>
      {hint && <p className="bulk-form__hint">{hint}</p>}

      <fieldset className="bulk-form__by">
        <legend>Granules</legend>
        <label className="check">
          <input
            type="radio"
            name="bulk-by"
            checked={by === 'query'}
            onChange={() => changed(setBy)('query')}
          />
          <span>By filter</span>
        </label>
        <label className="check">
          <input
            type="radio"
            name="bulk-by"
            checked={by === 'ids'}
            onChange={() => changed(setBy)('ids')}
          />
          <span>By id list</span>
        </label>
      </fieldset>

      {by === 'query' ? (
        <div className="bulk-form__filters">
          {FILTERS.map((f) => (
            <Field key={f.name} id={`bulk-f-${f.name}`} label={f.label}>
              <input
                id={`bulk-f-${f.name}`}
                type="text"
                value={filters[f.name] ?? ''}
                placeholder={f.placeholder}
                onChange={(e) => changed(setFilters)({ ...filters, [f.name]: e.target.value })}
              />
            </Field>
          ))}
        </div>
      ) : (
        <div className="bulk-form__ids">
          <Field id="bulk-ids" label="Ids, one per line (number or COLLECTION.VERSION:GRANULE_ID)">
            <textarea
              id="bulk-ids"
              rows={5}
              value={idsText}
              disabled={file !== null}
              onChange={(e) => changed(setIdsText)(e.target.value)}
            />
          </Field>
          <Field id="bulk-file" label="…or a text or CSV file (first column)">
            <input
              id="bulk-file"
              type="file"
              accept=".txt,.csv,text/plain,text/csv"
              onChange={(e) => changed(setFile)(e.target.files?.[0] ?? null)}
            />
          </Field>
        </div>
      )}

      <Field id="bulk-reason" label="Reason (kept with the job)">
        <textarea
          id="bulk-reason"
          rows={2}
          value={reason}
          onChange={(e) => changed(setReason)(e.target.value)}
        />
      </Field>

      <OutcomeNotice outcome={outcome} />
      {preview && <DryRunReport preview={preview} />}
      <div className="toolbar">
        <button
          type="submit"
          className="button"
          disabled={busy || (preview !== null && (preview.unknown_count > 0 || !preview.granules))}
        >
          {preview ? `Run on ${formatCount(preview.granules)} granules` : 'Dry run'}
        </button>
        {preview && (
          <button
            type="button"
            className="button button--quiet"
            disabled={busy}
            onClick={() => setPreview(null)}
          >
            Change
          </button>
        )}
      </div>
    </form>
  );
}

function DryRunReport({ preview }: { preview: BulkDryRun }) {
  return (
    <div className="bulk-dry-run" role="status">
      <p className="bulk-dry-run__total">
        Dry run: {formatCount(preview.granules)} granules, {formatBytes(preview.bytes)}
        {preview.duplicates > 0 &&
          ` (${formatCount(preview.duplicates)} repeated ids counted once)`}
      </p>
      {preview.unknown_count > 0 && (
        <>
          <p className="notice notice--error">
            {formatCount(preview.unknown_count)} lines name no granule; a job is made only when
            every line is known:
          </p>
          <ul className="bulk-dry-run__unknown" aria-label="Unknown lines">
            {preview.unknown.map((u) => (
              <li key={u.line}>
                line {u.line}: <code>{u.value}</code> — {u.detail}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
