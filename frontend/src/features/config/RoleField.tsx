import { Field } from '../../components/Field';
import type { GroupRole } from '../../lib/api/types';

export const ROLES: GroupRole[] = ['user', 'provider', 'operator'];

/** A role chosen from a form: a user's, or the one a sign-in rule gives. */
export function RoleField({
  id,
  value,
  error,
  onChange,
}: {
  id: string;
  value: GroupRole;
  error?: string;
  onChange: (role: GroupRole) => void;
}) {
  return (
    <Field id={id} label="Role" error={error}>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as GroupRole)}>
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
    </Field>
  );
}
