import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { configKeys } from '../../lib/api/config/keys';
import { updateUser } from '../../lib/api/config/user';
import { configUsersQuery, createUser } from '../../lib/api/config/users';
import type { GroupRole, NewUser, UserConfig } from '../../lib/api/types';
import { ConfigForm } from '../../components/ConfigForm';
import { DataTable } from '../../components/DataTable';
import { TextField } from '../../components/Field';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice, type Outcome } from '../../components/OutcomeNotice';
import { formatUtc } from '../../lib/format';
import { ROLES, RoleField } from './RoleField';
import { listOf } from '../../lib/api/configErrors';

/** Users: their role, whether they may log in, and the providers they deliver for. */
export function UsersConfigPage() {
  const users = useQuery(configUsersQuery());
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  return (
    <section className="page" aria-labelledby="config-users-heading">
      <div className="page__header">
        <h1 id="config-users-heading">Users</h1>
        <p className="page__lead">Roles, logins and provider membership.</p>
      </div>
      <OutcomeNotice outcome={outcome} />
      <Loaded query={users} what="the users">
        {(rows) => (
          <DataTable<UserConfig>
            caption="Users"
            captionHidden
            rows={rows}
            rowKey={(row) => row.id}
            columns={[
              { label: 'User', rowHeader: true, cell: (row) => row.username },
              { label: 'Email', cell: (row) => row.email || '—', className: 'wrap' },
              {
                label: 'Role',
                cell: (row) => <RoleChanger user={row} onDone={setOutcome} />,
              },
              { label: 'Providers', cell: (row) => (row.providers ?? []).join(', ') || '—' },
              { label: 'Last login', cell: (row) => formatUtc(row.last_login) },
              {
                label: 'Login',
                cell: (row) => <ActiveToggle user={row} onDone={setOutcome} />,
              },
            ]}
          />
        )}
      </Loaded>
      <NewUserForm />
    </section>
  );
}

function useUserChange(user: UserConfig, onDone: (outcome: Outcome) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (change: Parameters<typeof updateUser>[1]) => updateUser(user.id, change),
    onSuccess: async (saved) => {
      onDone({
        ok: true,
        text: `${saved.username}: ${saved.role}, ${saved.active ? 'active' : 'deactivated'}.`,
      });
      await queryClient.invalidateQueries({ queryKey: configKeys.users() });
    },
    onError: (error) => onDone({ ok: false, text: `${user.username}: ${error.message}` }),
  });
}

function RoleChanger({ user, onDone }: { user: UserConfig; onDone: (o: Outcome) => void }) {
  const change = useUserChange(user, onDone);
  return (
    <select
      aria-label={`Role of ${user.username}`}
      value={user.role}
      disabled={change.isPending}
      onChange={(e) => change.mutate({ role: e.target.value as GroupRole })}
    >
      {ROLES.map((role) => (
        <option key={role} value={role}>
          {role}
        </option>
      ))}
    </select>
  );
}

function ActiveToggle({ user, onDone }: { user: UserConfig; onDone: (o: Outcome) => void }) {
  const change = useUserChange(user, onDone);
  return (
    <button
      type="button"
      className="button button--small button--quiet"
      disabled={change.isPending}
      onClick={() => change.mutate({ active: !user.active })}
    >
      {user.active ? `Deactivate ${user.username}` : `Reactivate ${user.username}`}
    </button>
  );
}

function NewUserForm() {
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<GroupRole>('user');
  const [providers, setProviders] = useState('');
  return (
    <ConfigForm
      mutationFn={() =>
        createUser({ username: username.trim(), email, role, providers: listOf(providers) })
      }
      invalidate={configKeys.users()}
      title="New user"
      submit="Add user"
      notice={(save) => save.data && <Created user={save.data} />}
    >
      {(errors) => (
        <div className="config-form__row">
          <TextField
            id="nu-username"
            label="User name"
            value={username}
            onChange={setUsername}
            error={errors.username}
          />
          <TextField
            id="nu-email"
            label="Email"
            value={email}
            onChange={setEmail}
            error={errors.email}
            type="email"
          />
          <RoleField id="nu-role" value={role} error={errors.role} onChange={setRole} />
          <TextField
            id="nu-providers"
            label="Providers (comma-separated)"
            value={providers}
            onChange={setProviders}
            error={errors.providers}
          />
        </div>
      )}
    </ConfigForm>
  );
}

function Created({ user }: { user: NewUser }) {
  return (
    <p className="notice notice--ok" role="status">
      {user.username} created. First password (shown once):{' '}
      <span className="mono">{user.initial_password}</span>
    </p>
  );
}
