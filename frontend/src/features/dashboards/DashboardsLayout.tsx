import { useQuery } from '@tanstack/react-query';
import { Link, NavLink, Outlet, useLocation } from 'react-router';

import { ErrorMessage, Loading } from '../../components/StatusMessage';
import { meQuery } from '../auth/api/me';
import './dashboards.css';

export const DASHBOARD_PAGES = [
  { to: '/dashboards', label: 'Throughput', end: true },
  { to: '/dashboards/archive', label: 'Archive', end: false },
  { to: '/dashboards/queues', label: 'Queues', end: false },
  { to: '/dashboards/failures', label: 'Failures', end: false },
];

/** Operator dashboards: only operators get past the door; the API checks again anyway. */
export function DashboardsLayout() {
  const me = useQuery(meQuery());
  const location = useLocation();

  if (me.isPending) return <Loading>Checking who you are…</Loading>;
  if (me.isError) {
    return <ErrorMessage title="Could not tell who you are" detail={me.error.message} onRetry={() => void me.refetch()} />;
  }
  if (!me.data.authenticated) {
    const next = encodeURIComponent(`${location.pathname}${location.search}`);
    return (
      <section className="page">
        <h1>Dashboards</h1>
        <p>
          The dashboards are for archive operators. <Link to={`/login?next=${next}`}>Log in</Link> to see
          them.
        </p>
      </section>
    );
  }
  if (me.data.role !== 'operator') {
    return (
      <section className="page">
        <h1>Dashboards</h1>
        <p>The dashboards are for archive operators; {me.data.username} is not one.</p>
      </section>
    );
  }

  return (
    <div className="dashboards">
      <nav className="dash-nav" aria-label="Dashboards">
        {DASHBOARD_PAGES.map((page) => (
          <NavLink key={page.to} to={page.to} end={page.end}>
            {page.label}
          </NavLink>
        ))}
      </nav>
      <Outlet />
      <p className="dash-refresh">Figures refresh every 10 seconds.</p>
    </div>
  );
}
