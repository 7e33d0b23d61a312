import { createBrowserRouter, type RouteObject } from 'react-router';

import { Loading } from '../components/StatusMessage';
import { LoginPage } from '../features/auth/LoginPage';
import { CollectionsPage } from '../features/collections/CollectionsPage';
import { Layout } from './Layout';
import { NotFoundPage, RouteErrorPage } from './RouteErrorPage';

/** Shared by the browser router and the tests' memory router. */
export const routes: RouteObject[] = withLoadingFallback([
  {
    path: '/',
    element: <Layout />,
    errorElement: <RouteErrorPage />,
    children: [
      { index: true, element: <CollectionsPage /> },
      { path: 'login', element: <LoginPage /> },
      {
        path: 'tokens',
        lazy: async () => ({
          Component: (await import('../features/auth/TokensPage')).TokensPage,
        }),
      },
      // The scientist's pages; the map inside them loads Leaflet on its own, later still.
      {
        path: 'collections/:key',
        lazy: async () => ({
          Component: (await import('../features/collections/CollectionPage')).CollectionPage,
        }),
      },
      {
        path: 'search',
        lazy: async () => ({
          Component: (await import('../features/search/SearchPage')).SearchPage,
        }),
      },
      {
        path: 'granules/:id',
        lazy: async () => ({
          Component: (await import('../features/granules/GranulePage')).GranulePage,
        }),
      },
      {
        path: 'cart',
        lazy: async () => ({ Component: (await import('../features/cart/CartPage')).CartPage }),
      },
      {
        path: 'orders',
        lazy: async () => ({
          Component: (await import('../features/orders/OrdersPage')).OrdersPage,
        }),
      },
      {
        path: 'orders/:id',
        lazy: async () => ({ Component: (await import('../features/orders/OrderPage')).OrderPage }),
      },
      {
        // Operator dashboards and Chart.js load only when an operator opens them.
        path: 'dashboards',
        lazy: async () => ({
          Component: (await import('../features/dashboards/DashboardsLayout')).DashboardsLayout,
        }),
        children: [
          {
            index: true,
            lazy: async () => ({
              Component: (await import('../features/dashboards/OverviewPage')).OverviewPage,
            }),
          },
          {
            path: 'archive',
            lazy: async () => ({
              Component: (await import('../features/dashboards/ArchivePage')).ArchivePage,
            }),
          },
          {
            path: 'queues',
            lazy: async () => ({
              Component: (await import('../features/dashboards/QueuesPage')).QueuesPage,
            }),
          },
          {
            path: 'failures',
            lazy: async () => ({
              Component: (await import('../features/dashboards/FailuresPage')).FailuresPage,
            }),
          },
          {
            path: 'bulk',
            lazy: async () => ({
              Component: (await import('../features/bulk/BulkJobsPage')).BulkJobsPage,
            }),
          },
          {
            path: 'bulk/:id',
            lazy: async () => ({
              Component: (await import('../features/bulk/BulkJobPage')).BulkJobPage,
            }),
          },
          {
            path: 'granules',
            lazy: () => import('../features/console-granules/routes').then((m) => m.list),
          },
          {
            path: 'granules/:id',
            lazy: () => import('../features/console-granules/routes').then((m) => m.page),
          },
        ],
      },
      {
        // The operators' configuration: collections, providers, users, completeness, audit.
        path: 'config',
        lazy: async () => ({
          Component: (await import('../features/config/ConfigLayout')).ConfigLayout,
        }),
        children: [
          {
            index: true,
            lazy: async () => ({
              Component: (await import('../features/config/CollectionsConfigPage'))
                .CollectionsConfigPage,
            }),
          },
          {
            path: 'collections/new',
            lazy: async () => ({
              Component: (await import('../features/config/CollectionFormPage')).CollectionFormPage,
            }),
          },
          {
            path: 'collections/:key',
            lazy: async () => ({
              Component: (await import('../features/config/CollectionFormPage')).CollectionFormPage,
            }),
          },
          {
            path: 'providers',
            lazy: async () => ({
              Component: (await import('../features/config/ProvidersConfigPage'))
                .ProvidersConfigPage,
            }),
          },
          {
            path: 'providers/:name',
            lazy: async () => ({
              Component: (await import('../features/config/ProviderFormPage')).ProviderFormPage,
            }),
          },
          {
            path: 'users',
            lazy: async () => ({
              Component: (await import('../features/config/UsersConfigPage')).UsersConfigPage,
            }),
          },
          {
            path: 'sign-in',
            lazy: async () => ({
              Component: (await import('../features/config/SignInRulesPage')).SignInRulesPage,
            }),
          },
          {
            path: 'completeness',
            lazy: async () => ({
              Component: (await import('../features/config/CompletenessPage')).CompletenessPage,
            }),
          },
          {
            path: 'recall-shares',
            lazy: async () => ({
              Component: (await import('../features/config/RecallSharesPage')).RecallSharesPage,
            }),
          },
          {
            path: 'audit',
            lazy: async () => ({
              Component: (await import('../features/config/AuditLogPage')).AuditLogPage,
            }),
          },
          {
            path: 'alerts',
            lazy: async () => ({
              Component: (await import('../features/config/AlertsPage')).AlertsPage,
            }),
          },
        ],
      },
      {
        path: 'subscriptions',
        lazy: async () => ({
          Component: (await import('../features/subscriptions/SubscriptionsPage'))
            .SubscriptionsPage,
        }),
      },
      {
        path: 'subscriptions/new',
        lazy: async () => ({
          Component: (await import('../features/subscriptions/SubscriptionEditPages'))
            .NewSubscriptionPage,
        }),
      },
      {
        path: 'subscriptions/:id',
        lazy: async () => ({
          Component: (await import('../features/subscriptions/SubscriptionPage')).SubscriptionPage,
        }),
      },
      {
        path: 'subscriptions/:id/edit',
        lazy: async () => ({
          Component: (await import('../features/subscriptions/SubscriptionEditPages'))
            .EditSubscriptionPage,
        }),
      },
      {
        // The provider's own ingest requests and PDRs.
        path: 'provider',
        lazy: async () => ({
          Component: (await import('../features/provider/ProviderLayout')).ProviderLayout,
        }),
        children: [
          {
            index: true,
            lazy: async () => ({
              Component: (await import('../features/provider/RequestsPage')).RequestsPage,
            }),
          },
          {
            path: 'requests/:id',
            lazy: async () => ({
              Component: (await import('../features/provider/RequestPage')).RequestPage,
            }),
          },
          {
            path: 'pdrs',
            lazy: async () => ({
              Component: (await import('../features/provider/PdrsPage')).PdrsPage,
            }),
          },
          {
            path: 'pdrs/:id',
            lazy: async () => ({
              Component: (await import('../features/provider/PdrPage')).PdrPage,
            }),
          },
          {
            path: 'notifications',
            lazy: async () => ({
              Component: (await import('../features/provider/NotificationsPage')).NotificationsPage,
            }),
          },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);

/**
 * A full page load of a lazy page renders before its code arrives: each lazy route shows a
 * loading line meanwhile (without one React Router warns on every load, and the layout, which
 * is not lazy, would go blank too).
 */
function withLoadingFallback(list: RouteObject[]): RouteObject[] {
  return list.map((route) => {
    const children = route.children ? { children: withLoadingFallback(route.children) } : {};
    const fallback = route.lazy ? { hydrateFallbackElement: <Loading>Loading…</Loading> } : {};
    return { ...route, ...fallback, ...children } as RouteObject;
  });
}

export function createAppRouter() {
  return createBrowserRouter(routes);
}
