import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';

import { type Outcome, OutcomeNotice } from '../../components/OutcomeNotice';
import { ApiError, fieldErrors } from '../../lib/api/client';
import { consoleGranuleQuery } from '../../lib/api/console/granule';
import { changeGranule, type LifecycleAction } from '../../lib/api/console/granuleLifecycle';
import { consoleKeys } from '../../lib/api/console/keys';
import type { ConsoleGranule } from '../../lib/api/types';

const WORDS: Record<
  LifecycleAction,
  { title: string; button: string; done: string; what: string }
> = {
  withdraw: {
    title: 'Withdraw',
    button: 'Withdraw granule',
    done: 'Withdrawn: hidden from search, STAC, subscriptions and orders; kept on tape.',
    what: 'Users stop seeing it; open orders for it fail with your reason. You can restore it.',
  },
  restore: {
    title: 'Restore',
    button: 'Restore granule',
    done: 'Restored: archived and visible again.',
    what: 'Users see it again and may order it.',
  },
  delete: {
    title: 'Delete',
    button: 'Delete granule',
    done: 'Deleted: its tape copies are released; a repack of their volumes reclaims the room.',
    what: 'Cannot be undone. A tombstone stays for the audit trail; tape room is reclaimed by a repack.',
  },
};

/** The actions this state allows. */
function actionsFor(state: ConsoleGranule['state']): LifecycleAction[] {
  if (state === 'archived') return ['withdraw', 'delete'];
  if (state === 'withdrawn') return ['restore', 'delete'];
  if (state === 'failed' || state === 'superseded') return ['delete'];
  return [];
}

/** Withdraw, restore and delete, each behind a form that asks why (and, to delete, the id). */
export function LifecycleActions({ granule }: { granule: ConsoleGranule }) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const actions = actionsFor(granule.state);
  return (
    <section aria-labelledby="cg-actions-heading">
      <h3 id="cg-actions-heading">Lifecycle</h3>
      <OutcomeNotice outcome={outcome} />
      {actions.length === 0 ? (
        <p className="dash-note">
          {granule.state === 'deleted'
            ? 'Deleted: nothing more can be done; its history stays below.'
            : `A ${granule.state} granule cannot be withdrawn or deleted until it is archived.`}
        </p>
      ) : (
        <div className="cg-actions">
          {actions.map((action) => (
            <ActionForm key={action} action={action} granule={granule} onOutcome={setOutcome} />
          ))}
        </div>
      )}
    </section>
  );
}

function ActionForm({
  action,
  granule,
  onOutcome,
}: {
  action: LifecycleAction;
  granule: ConsoleGranule;
  onOutcome: (outcome: Outcome) => void;
}) {
  const words = WORDS[action];
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const id = useId();
  const change = useMutation({
    mutationFn: () => changeGranule(granule.id, action, reason.trim(), typed.trim()),
    onSuccess: async (page) => {
      queryClient.setQueryData(consoleGranuleQuery(granule.id).queryKey, page);
      setOpen(false);
      onOutcome({ ok: true, text: words.done });
      await queryClient.invalidateQueries({ queryKey: consoleKeys.granules() });
    },
    onError: (error) => onOutcome({ ok: false, text: error.message }),
  });
  const errors = change.error instanceof ApiError ? fieldErrors(change.error.errors) : {};

  if (!open) {
    return (
      <div className="cg-action form-card">
        <h3>{words.title}</h3>
        <p className="muted small">{words.what}</p>
        <div className="cg-action__buttons">
          <button type="button" className="button button--quiet" onClick={() => setOpen(true)}>
            {words.title}…
          </button>
        </div>
      </div>
    );
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    change.mutate();
  }

  const confirmed = action !== 'delete' || typed.trim() === granule.granule_id;
  return (
    <form className="cg-action form-card" onSubmit={onSubmit} aria-label={words.title}>
      <h3>{words.title}</h3>
      <p className="muted small">{words.what}</p>
      <div className="field">
        <label htmlFor={`${id}-reason`}>Reason (kept in the audit trail)</label>
        <textarea
          id={`${id}-reason`}
          value={reason}
          required
          maxLength={2000}
          onChange={(event) => setReason(event.target.value)}
        />
        {errors.reason && <p className="field-error">{errors.reason}</p>}
      </div>
      {action === 'delete' && (
        <div className="field">
          <label htmlFor={`${id}-confirm`}>Type the granule id to confirm</label>
          <input
            id={`${id}-confirm`}
            type="text"
            value={typed}
            autoComplete="off"
            placeholder={granule.granule_id}
            onChange={(event) => setTyped(event.target.value)}
          />
          {errors.confirm_granule_id && <p className="field-error">{errors.confirm_granule_id}</p>}
        </div>
      )}
      <div className="cg-action__buttons">
        <button
          type="submit"
          className={action === 'delete' ? 'button button--danger' : 'button'}
          disabled={change.isPending || !reason.trim() || !confirmed}
        >
          {words.button}
        </button>
        <button type="button" className="button button--quiet" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
