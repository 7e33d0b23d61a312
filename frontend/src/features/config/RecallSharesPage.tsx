import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';

import { recallSharesQuery, setRecallShares } from '../../lib/api/config/recallShares';
import type { RecallShare } from '../../lib/api/types';
import { ConfigForm } from '../../components/ConfigForm';
import { Field, TextField } from '../../components/Field';
import { Loaded } from '../../components/Loaded';

/** The fair share of drives between kinds of recall: when orders, stage requests and the rest
 * compete for drives, each kind gets reads in proportion to its weight. */
export function RecallSharesPage() {
  const shares = useQuery(recallSharesQuery());
  return (
    <section className="page" aria-labelledby="config-shares-heading">
      <div className="page__header">
        <h1 id="config-shares-heading">Recall shares</h1>
        <p className="page__lead">
          When several kinds of recall wait for the drives at one priority, the kind furthest below
          its share of the reads of the last hour is mounted first. A weight of 3 against 1 gives
          three reads for every one. Changes are in the audit log.
        </p>
      </div>
      <Loaded query={shares} what="the recall shares">
        {(rows) => <SharesForm rows={rows} />}
      </Loaded>
    </section>
  );
}

function SharesForm({ rows }: { rows: RecallShare[] }) {
  const [weights, setWeights] = useState(() =>
    Object.fromEntries(rows.map((row) => [row.kind, String(row.weight)])),
  );
  const [reason, setReason] = useState('');
  return (
    <ConfigForm
      mutationFn={() =>
        setRecallShares({
          weights: Object.fromEntries(rows.map((row) => [row.kind, Number(weights[row.kind])])),
          reason,
        })
      }
      submit="Save weights"
      saved="Saved."
    >
      {(errors) => (
        <>
          <div className="config-form__row">
            {rows.map((row) => {
              const id = `share-${row.kind || 'other'}`;
              return (
                <Field key={row.kind} id={id} label={`${row.label} (${row.served} lately)`}>
                  <input
                    id={id}
                    type="number"
                    min={1}
                    max={1000}
                    step={1}
                    value={weights[row.kind]}
                    onChange={(e) => setWeights({ ...weights, [row.kind]: e.target.value })}
                  />
                </Field>
              );
            })}
          </div>
          {errors.weights && <p role="alert">{errors.weights}</p>}
          <TextField
            id="share-reason"
            label="Reason (for the audit log)"
            value={reason}
            onChange={setReason}
            error={errors.reason}
          />
        </>
      )}
    </ConfigForm>
  );
}
