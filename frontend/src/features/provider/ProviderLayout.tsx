import { Link, NavLink, Outlet, useLocation } from 'react-router';

import { RequireLogin } from '../../components/RequireLogin';
import './provider.css';

/** The provider's own ingest: requests and PDRs, live while they run. */
export function ProviderLayout() {
  const path = useLocation().pathname.replace(/\/+$/, '');
  // A request's own page belongs to the requests tab.
  const onRequests = path === '/provider' || path.startsWith('/provider/requests/');
  return (
    <RequireLogin
      title="My ingest"
      why="to follow your ingest requests"
      roles={['provider', 'operator']}
    >
      {() => (
        <div className="provider">
          <nav className="tab-nav" aria-label="Ingest">
            <Link to="/provider" aria-current={onRequests ? 'page' : undefined}>
              Ingest requests
            </Link>
            <NavLink to="/provider/pdrs">PDRs</NavLink>
            <NavLink to="/provider/notifications">Notifications</NavLink>
          </nav>
          <Outlet />
        </div>
      )}
    </RequireLogin>
  );
}
