import { useQuery } from '@tanstack/react-query';

import { meQuery } from './api/me';

/** Until the app has its own login form, the Django admin login stands in. */
export const LOGIN_URL = '/admin/login/?next=/';

export function UserMenu() {
  const me = useQuery(meQuery());

  if (me.isPending) return <div className="user-menu" aria-hidden="true" />;

  if (me.data?.authenticated) {
    return (
      <div className="user-menu">
        <span className="user-menu__name" title={me.data.email || undefined}>
          <span className="visually-hidden">Signed in as </span>
          {me.data.username}
        </span>
        {me.data.role !== 'user' && <span className="badge badge--role">{me.data.role}</span>}
      </div>
    );
  }

  // Anonymous, or /me/ failed: offering a login is the useful thing either way.
  return (
    <div className="user-menu">
      <a className="button button--small" href={LOGIN_URL}>
        Log in
      </a>
    </div>
  );
}
