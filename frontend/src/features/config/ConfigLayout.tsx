import { NavLink, Outlet } from 'react-router';

import { RequireLogin } from '../../components/RequireLogin';
import './config.css';

export const CONFIG_PAGES = [
  { to: '/config', label: 'Collections', end: true },
  { to: '/config/providers', label: 'Providers', end: false },
  { to: '/config/users', label: 'Users', end: false },
  { to: '/config/sign-in', label: 'Sign-in rules', end: false },
  { to: '/config/completeness', label: 'Completeness', end: false },
  { to: '/config/recall-shares', label: 'Recall shares', end: false },
  { to: '/config/alerts', label: 'Alerts', end: false },
  { to: '/config/audit', label: 'Audit log', end: false },
];

/** The operators' configuration: only operators get past the door; the API checks again. */
export function ConfigLayout() {
  return (
    <RequireLogin
      title="Configuration"
      why="to configure the archive"
      roles={['operator']}
      audience="Configuration is for archive operators"
    >
      {() => (
        <div className="config">
          <nav className="tab-nav" aria-label="Configuration">
            {CONFIG_PAGES.map((page) => (
              <NavLink key={page.to} to={page.to} end={page.end}>
                {page.label}
              </NavLink>
            ))}
          </nav>
          <Outlet />
        </div>
      )}
    </RequireLogin>
  );
}
