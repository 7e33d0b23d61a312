import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { configKeys } from '../../lib/api/config/keys';
import { deleteSignInRule } from '../../lib/api/config/signInRule';
import { createSignInRule, signInRulesQuery } from '../../lib/api/config/signInRules';
import type { GroupRole, SignInRule } from '../../lib/api/types';
import { ConfigForm } from '../../components/ConfigForm';
import { DataTable } from '../../components/DataTable';
import { TextField } from '../../components/Field';
import { Loaded } from '../../components/Loaded';
import { RoleField } from './RoleField';

/** Single sign-on: which claim values (groups) give which role and provider. */
export function SignInRulesPage() {
  const rules = useQuery(signInRulesQuery());
  return (
    <section className="page" aria-labelledby="config-sign-in-heading">
      <div className="page__header">
        <h1 id="config-sign-in-heading">Sign-in rules</h1>
        <p className="page__lead">
          Users who sign in through the OpenID provider get the most capable role whose rule their
          token matches (user when none does), at every sign-in.
        </p>
      </div>
      <Loaded query={rules} what="the sign-in rules">
        {(rows) => (
          <DataTable<SignInRule>
            caption="Sign-in rules"
            captionHidden
            rows={rows}
            rowKey={(row) => row.id}
            empty="No rules: everyone who signs in through the provider is a user."
            columns={[
              { label: 'Claim', cell: (row) => row.claim ?? 'groups' },
              { label: 'Holds', rowHeader: true, cell: (row) => row.value },
              { label: 'Role', cell: (row) => row.role },
              { label: 'Provider', cell: (row) => row.provider || '—' },
              { label: '', cell: (row) => <RemoveRule rule={row} /> },
            ]}
          />
        )}
      </Loaded>
      <NewRuleForm />
    </section>
  );
}

function RemoveRule({ rule }: { rule: SignInRule }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => deleteSignInRule(rule.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: configKeys.all }),
  });
  return (
    <button
      type="button"
      className="button button--small button--quiet"
      disabled={remove.isPending}
      onClick={() => remove.mutate()}
    >
      Remove rule {rule.value}
    </button>
  );
}

function NewRuleForm() {
  const [claim, setClaim] = useState('groups');
  const [value, setValue] = useState('');
  const [role, setRole] = useState<GroupRole>('user');
  const [provider, setProvider] = useState('');
  return (
    <ConfigForm
      mutationFn={() =>
        createSignInRule({ claim, value: value.trim(), role, provider: provider.trim() || null })
      }
      title="New rule"
      submit="Add rule"
    >
      {(errors) => (
        <div className="config-form__row">
          <TextField
            id="sr-claim"
            label="Claim"
            value={claim}
            onChange={setClaim}
            error={errors.claim}
          />
          <TextField
            id="sr-value"
            label="Holds the value"
            value={value}
            onChange={setValue}
            error={errors.value}
          />
          <RoleField id="sr-role" value={role} error={errors.role} onChange={setRole} />
          <TextField
            id="sr-provider"
            label="Provider (optional)"
            value={provider}
            onChange={setProvider}
            error={errors.provider}
          />
        </div>
      )}
    </ConfigForm>
  );
}
