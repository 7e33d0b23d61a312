import { createBrowserRouter, type RouteObject } from 'react-router';

import { LoginPage } from '../features/auth/LoginPage';
import { CollectionsPage } from '../features/collections/CollectionsPage';
import { Layout } from './Layout';
import { NotFoundPage, RouteErrorPage } from './RouteErrorPage';

/** Shared by the browser router and the tests' memory router. */
export const routes: RouteObject[] = [
  {
    path: '/',
    element: <Layout />,
    errorElement: <RouteErrorPage />,
    children: [
      { index: true, element: <CollectionsPage /> },
      { path: 'login', element: <LoginPage /> },
      {
        // Operator dashboards and Chart.js load only when an operator opens them.
        path: 'dashboards',
        lazy: async () => ({ Component: (await import('../features/dashboards/DashboardsLayout')).DashboardsLayout }),
        children: [
          {
            index: true,
            lazy: async () => ({ Component: (await import('../features/dashboards/OverviewPage')).OverviewPage }),
          },
          {
            path: 'archive',
            lazy: async () => ({ Component: (await import('../features/dashboards/ArchivePage')).ArchivePage }),
          },
          {
            path: 'queues',
            lazy: async () => ({ Component: (await import('../features/dashboards/QueuesPage')).QueuesPage }),
          },
          {
            path: 'failures',
            lazy: async () => ({ Component: (await import('../features/dashboards/FailuresPage')).FailuresPage }),
          },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
