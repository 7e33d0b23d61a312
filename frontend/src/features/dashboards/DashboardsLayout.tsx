import { NavLink, Outlet } from 'react-router';

import { RequireLogin } from '../../components/RequireLogin';
import './dashboards.css';

export const DASHBOARD_PAGES = [
  { to: '/dashboards', label: 'Throughput', end: true },
  { to: '/dashboards/archive', label: 'Archive', end: false },
  { to: '/dashboards/queues', label: 'Queues', end: false },
  { to: '/dashboards/failures', label: 'Failures', end: false },
  { to: '/dashboards/bulk', label: 'Bulk jobs', end: false },
  { to: '/dashboards/granules', label: 'Granules', end: false },
];

/** Operator dashboards: only operators get past the door; the API checks again anyway. */
export function DashboardsLayout() {
  return (
    <RequireLogin
      title="Dashboards"
      why="to see them"
      roles={['operator']}
      audience="The dashboards are for archive operators"
    >
      {() => (
        <div className="dashboards">
          <nav className="tab-nav" aria-label="Dashboards">
            {DASHBOARD_PAGES.map((page) => (
              <NavLink key={page.to} to={page.to} end={page.end}>
                {page.label}
              </NavLink>
            ))}
          </nav>
          <Outlet />
          <p className="dash-refresh">Figures refresh every 10 seconds.</p>
        </div>
      )}
    </RequireLogin>
  );
}
