import { isRouteErrorResponse, Link, useRouteError } from 'react-router';

import { ErrorMessage } from '../components/StatusMessage';

export function NotFoundPage() {
  return (
    <section className="page">
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. <Link to="/">Back to the collections</Link>.
      </p>
    </section>
  );
}

/** Last line of defence: a render crash still shows a message, never a blank page. */
export function RouteErrorPage() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : error instanceof Error
      ? error.message
      : 'Something went wrong.';
  return (
    <main id="main" className="site-main">
      <section className="page">
        <h1>Granary hit a problem</h1>
        <ErrorMessage title="This page could not be shown" detail={message} />
        <p>
          <a href="/">Reload the home page</a>
        </p>
      </section>
    </main>
  );
}
