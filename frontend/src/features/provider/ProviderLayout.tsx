import { NavLink, Outlet } from 'react-router';

import { RequireLogin } from '../../components/RequireLogin';
import './provider.css';

/** The provider's own ingest: requests and PDRs, live while they run. */
export function ProviderLayout() {
  return (
    <RequireLogin title="My ingest" why="to follow your ingest requests" roles={['provider', 'operator']}>
      {() => (
        <div className="provider">
          <nav className="sub-nav" aria-label="Ingest">
            <NavLink to="/provider" end>
              Ingest requests
            </NavLink>
            <NavLink to="/provider/pdrs">PDRs</NavLink>
          </nav>
          <Outlet />
        </div>
      )}
    </RequireLogin>
  );
}
