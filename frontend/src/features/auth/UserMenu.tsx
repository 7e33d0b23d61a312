import { useMutation, useQuery, useQueryClient, type Query } from '@tanstack/react-query';
import { Link, useLocation, useNavigate } from 'react-router';

import { authKeys } from '../../lib/api/auth/keys';
import { logOut } from '../../lib/api/auth/logout';
import { anonymousMe, meQuery } from '../../lib/api/auth/me';

export function UserMenu() {
  const me = useQuery(meQuery());
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const oldSession = (query: Query) => query.queryKey[0] !== authKeys.all[0];
  const logout = useMutation({
    mutationFn: logOut,
    // The old session's page leaves the screen before the session ends: a page still mounted
    // once it has ended (a poll, a debounced preview, a query dropped and asked again at its
    // next render) asks as nobody and gets a 401. The home page asks for nothing private.
    onMutate: async () => {
      await navigate('/', { flushSync: true });
      await queryClient.cancelQueries({ predicate: oldSession });
    },
    onSuccess: async () => {
      // A /me/ still on its way for the old session must not land after the logout.
      await queryClient.cancelQueries({ queryKey: meQuery().queryKey });
      queryClient.setQueryData(meQuery().queryKey, anonymousMe);
      // What only a session may ask (the header's cart) is dropped, never asked again: until
      // the page has rendered the anonymous visitor its observer still asks as the old user.
      queryClient.removeQueries({ predicate: (query) => query.meta?.session === true });
      // Nothing fetched for the old session may linger: what the page left is dropped, and
      // what the home page shows now is asked again as the anonymous visitor.
      queryClient.removeQueries({ type: 'inactive', predicate: oldSession });
      await queryClient.invalidateQueries({ type: 'active', predicate: oldSession });
    },
  });

  if (me.isPending) return <div className="user-menu" aria-hidden="true" />;

  if (me.data?.authenticated) {
    return (
      <div className="user-menu">
        {/* The name leads to the account's API tokens: one more button would wrap the header. */}
        <Link
          className="user-menu__name"
          to="/tokens"
          title={`${me.data.email ? `${me.data.email}: ` : ''}your API tokens`}
        >
          <span className="visually-hidden">Signed in as </span>
          {me.data.username}
          <span className="visually-hidden"> (your API tokens)</span>
        </Link>
        {me.data.role !== 'user' && <span className="badge badge--role">{me.data.role}</span>}
        <button
          type="button"
          className="button button--small button--quiet"
          onClick={() => logout.mutate()}
          disabled={logout.isPending}
        >
          Log out
        </button>
        {logout.isError && (
          <span className="user-menu__error" role="alert">
            {logout.error.message}
          </span>
        )}
      </div>
    );
  }

  // Anonymous, or /me/ failed: offering a login is the useful thing either way.
  const here = `${location.pathname}${location.search}`;
  const to =
    here === '/' || location.pathname === '/login'
      ? '/login'
      : `/login?next=${encodeURIComponent(here)}`;
  return (
    <div className="user-menu">
      {location.pathname !== '/login' && (
        <Link className="button button--small" to={to}>
          Log in
        </Link>
      )}
    </div>
  );
}
