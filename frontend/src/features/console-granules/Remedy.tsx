import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';

import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { canDo, remedy, WhyNot } from '../../components/Remedies';
import { releaseCached } from '../../lib/api/archive/release';
import { consoleGranuleQuery } from '../../lib/api/console/granule';
import { consoleKeys } from '../../lib/api/console/keys';
import { redeliverGranule } from '../../lib/api/console/redeliver';
import type { ConsoleGranulePage, Released } from '../../lib/api/types';
import { formatBytes, formatCount } from '../../lib/format';

/**
 * Why the granule's archive work stopped and what can still be done: the server's actions,
 * a redelivery when only the provider's bytes can help, never a retry that would fail again.
 */
export function Stopped({ page }: { page: ConsoleGranulePage }) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  if (!page.failure && page.actions.length === 0) return <OutcomeNotice outcome={outcome} />;
  return (
    <section className="cg-stopped notice notice--error" aria-labelledby="cg-stopped-heading">
      <h3 id="cg-stopped-heading">Archive work stopped</h3>
      {page.failure && <p>{page.failure}</p>}
      <WhyNot actions={page.actions} />
      {canDo(page.actions, 'retry') && (
        <p className="small">Retry: {remedy(page.actions, 'retry')?.reason}.</p>
      )}
      {canDo(page.actions, 'redeliver') && (
        <RedeliverForm
          granuleId={page.granule.id}
          what={remedy(page.actions, 'redeliver')?.reason ?? ''}
          onOutcome={setOutcome}
        />
      )}
      <OutcomeNotice outcome={outcome} />
    </section>
  );
}

function RedeliverForm({
  granuleId,
  what,
  onOutcome,
}: {
  granuleId: number;
  what: string;
  onOutcome: (outcome: Outcome) => void;
}) {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const id = useId();
  const ask = useMutation({
    mutationFn: () => redeliverGranule(granuleId, reason.trim()),
    onSuccess: async (page) => {
      queryClient.setQueryData(consoleGranuleQuery(granuleId).queryKey, page);
      onOutcome({
        ok: true,
        text: 'Given up: the granule is failed and its provider is asked to deliver it again.',
      });
      await queryClient.invalidateQueries({ queryKey: consoleKeys.all });
    },
    onError: (error) => onOutcome({ ok: false, text: error.message }),
  });
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    ask.mutate();
  }
  return (
    <form className="form-card" onSubmit={onSubmit} aria-label="Ask for a redelivery">
      <p className="small">Redeliver: {what}.</p>
      <div className="field">
        <label htmlFor={`${id}-reason`}>Note to the provider (kept in the audit trail)</label>
        <textarea
          id={`${id}-reason`}
          value={reason}
          required
          maxLength={2000}
          onChange={(event) => setReason(event.target.value)}
        />
      </div>
      <button type="submit" className="button" disabled={ask.isPending || !reason.trim()}>
        Ask the provider to deliver it again
      </button>
    </form>
  );
}

/**
 * Drop the granule's cached copies now (they stay on their tape or object copies): what was
 * released, the bytes freed, and what the cache kept with why.
 */
export function ReleaseCache({ page }: { page: ConsoleGranulePage }) {
  const queryClient = useQueryClient();
  const cached = page.files.filter((f) => f.cache && f.cache.state !== 'staging');
  // browse images stay in the cache whatever the data's residency (granule pages show them)
  const releasable = cached.filter((f) => f.role !== 'browse');
  const names = new Map(page.files.map((f) => [f.id, f.name]));
  const [result, setResult] = useState<Released | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const release = useMutation({
    mutationFn: () => releaseCached(releasable.map((f) => f.id)),
    onMutate: () => {
      setResult(null);
      setRefused(null);
    },
    onSuccess: async (answer) => {
      setResult(answer);
      await queryClient.invalidateQueries({ queryKey: consoleKeys.granule(page.granule.id) });
    },
    onError: (error) => setRefused(error.message),
  });
  return (
    <section aria-labelledby="cg-cache-heading">
      <h3 id="cg-cache-heading">Cache</h3>
      <p className="dash-note">
        {cached.length === 0
          ? 'No file of this granule is in the cache.'
          : `${formatCount(cached.length)} of ${formatCount(page.files.length)} files in the cache.`}
        {releasable.length > 0
          ? ' Releasing drops their cached copies now; they stay on their copies and an order recalls them.'
          : cached.length > 0 && ' Only its browse image: browse images stay in the cache.'}
      </p>
      {releasable.length > 0 && (
        <button
          type="button"
          className="button button--quiet"
          disabled={release.isPending}
          onClick={() => release.mutate()}
        >
          Release cached copies
        </button>
      )}
      <div aria-live="polite">
        {result && (
          <div className="notice notice--ok" role="status" aria-label="Release outcome">
            <p>
              Released {formatCount(result.files.length)}{' '}
              {result.files.length === 1 ? 'file' : 'files'}, {formatBytes(result.freed_bytes)}{' '}
              freed
              {result.files.length > 0 &&
                `: ${result.files.map((f) => names.get(f) ?? `file ${f}`).join(', ')}`}
              .
            </p>
            {result.kept.length > 0 && (
              <ul aria-label="Kept in the cache">
                {result.kept.map((k) => (
                  <li key={k.file}>
                    Kept {names.get(k.file) ?? `file ${k.file}`}: {k.reason}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {refused && (
          <p className="notice notice--error" role="alert">
            Nothing was released: {refused}
          </p>
        )}
      </div>
    </section>
  );
}
