import { createBrowserRouter, type RouteObject } from 'react-router';

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
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
