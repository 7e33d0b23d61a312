import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';

import { auditQuery } from '../../lib/api/config/audit';
import type { AuditFilters } from '../../lib/api/config/keys';
import type { AuditEvent } from '../../lib/api/types';
import { DataTable } from '../../components/DataTable';
import { Field } from '../../components/Field';
import { LinkPager } from '../../components/LinkPager';
import { Loaded } from '../../components/Loaded';
import { formatUtc } from '../../lib/format';

const FILTERS = [
  ['target_type', 'Target type', 'e.g. collection, provider, user'],
  ['target_id', 'Target id', ''],
  ['actor', 'Who', 'user name'],
  ['since', 'Since (UTC)', 'YYYY-MM-DD'],
  ['until', 'Before (UTC)', 'YYYY-MM-DD'],
] as const;

/** Who changed what, when and why, newest first; filters and page live in the address. */
export function AuditLogPage() {
  const [params, setParams] = useSearchParams();
  const filters: AuditFilters & { cursor?: string } = {};
  for (const [name] of FILTERS) {
    const value = params.get(name);
    if (value) filters[name] = value;
  }
  const cursor = params.get('cursor');
  if (cursor) filters.cursor = cursor;
  const events = useQuery(auditQuery(filters));
  const [draft, setDraft] = useState<Record<string, string>>(() =>
    Object.fromEntries(FILTERS.map(([name]) => [name, params.get(name) ?? ''])),
  );
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setParams(Object.fromEntries(Object.entries(draft).filter(([, v]) => v.trim() !== '')));
  }
  const to = (next: string | null) => {
    const copy = new URLSearchParams(params);
    if (next) copy.set('cursor', next);
    else copy.delete('cursor');
    return `?${copy.toString()}`;
  };
  return (
    <section className="page" aria-labelledby="audit-heading">
      <div className="page__header">
        <h1 id="audit-heading">Audit log</h1>
        <p className="page__lead">Operators’ changes: who, when, what changed and why.</p>
      </div>
      <form className="toolbar config-filters" onSubmit={onSubmit} role="search">
        {FILTERS.map(([name, label, hint]) => (
          <Field key={name} id={`audit-${name}`} label={label}>
            <input
              id={`audit-${name}`}
              type="text"
              placeholder={hint}
              value={draft[name]}
              onChange={(e) => setDraft((old) => ({ ...old, [name]: e.target.value }))}
            />
          </Field>
        ))}
        <button className="button" type="submit">
          Filter
        </button>
      </form>
      <Loaded query={events} what="the audit log">
        {(page) => (
          <>
            <DataTable<AuditEvent>
              caption="Audit events"
              captionHidden
              rows={page.results}
              rowKey={(row) => row.id}
              empty={<p>No change matches.</p>}
              columns={[
                { label: 'When', cell: (row) => formatUtc(row.at) },
                { label: 'Who', cell: (row) => row.actor },
                { label: 'Did', cell: (row) => row.action },
                {
                  label: 'To',
                  rowHeader: true,
                  cell: (row) => `${row.target_type} ${row.target_label || row.target_id}`,
                },
                { label: 'Changes', cell: (row) => <Changes event={row} />, className: 'wrap' },
                { label: 'Why', cell: (row) => row.reason || '—' },
              ]}
            />
            <LinkPager label="Audit log pages" next={page.next} previous={page.previous} to={to} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function show(value: unknown): string {
  if (value === null || value === undefined || value === '') return '∅';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function Changes({ event }: { event: AuditEvent }) {
  const changes = (event.detail as { changes?: Record<string, [unknown, unknown]> } | null)
    ?.changes;
  // A creation diffs every field against nothing; an empty field "∅ → ∅" says nothing.
  const shown = Object.entries(changes ?? {}).filter(([, [a, b]]) => show(a) !== show(b));
  if (shown.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="config-changes">
      {shown.map(([field, [before, after]]) => (
        <li key={field}>
          <span className="mono">{field}</span>: {show(before)} → {show(after)}
        </li>
      ))}
    </ul>
  );
}
