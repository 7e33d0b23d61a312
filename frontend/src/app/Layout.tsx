import { useQuery } from '@tanstack/react-query';
import { Link, NavLink, Outlet } from 'react-router';

import { meQuery } from '../lib/api/auth/me';
import { UserMenu } from '../features/auth/UserMenu';
import { CartLink } from '../features/cart/CartLink';

export function Layout() {
  const me = useQuery(meQuery());
  const operator = me.data?.authenticated === true && me.data.role === 'operator';
  const loggedIn = me.data?.authenticated === true;
  const provider = loggedIn && me.data?.roles.includes('provider');
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="site-header__inner">
          <Link to="/" className="brand">
            <svg className="brand__mark" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
              <rect width="32" height="32" rx="6" />
              <path d="M8 24V12l8-5 8 5v12z" />
            </svg>
            Granary
          </Link>
          <nav className="site-nav" aria-label="Main">
            <NavLink to="/" end>
              Collections
            </NavLink>
            <NavLink to="/search">Search</NavLink>
            {loggedIn && <CartLink />}
            {loggedIn && <NavLink to="/orders">Orders</NavLink>}
            {loggedIn && <NavLink to="/subscriptions">Subscriptions</NavLink>}
            {provider && <NavLink to="/provider">My ingest</NavLink>}
            {operator && <NavLink to="/dashboards">Dashboards</NavLink>}
            {operator && <NavLink to="/config">Configuration</NavLink>}
            <a href="/api/docs/">API</a>
          </nav>
          <UserMenu />
        </div>
      </header>
      <main id="main" className="site-main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
