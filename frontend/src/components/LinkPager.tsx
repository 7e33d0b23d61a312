import { Link, type To } from 'react-router';

import { cursorOf } from '../lib/api/client';

/**
 * Previous / next links over a cursor-paged list whose cursor lives in the page's address, so
 * every page of a list can be bookmarked. `to` builds the address for a cursor (null: page one).
 */
export function LinkPager({
  label,
  next,
  previous,
  to,
  back = '← Previous',
  forward = 'Next →',
}: {
  label: string;
  next: string | null;
  previous: string | null;
  to: (cursor: string | null) => To;
  back?: string;
  forward?: string;
}) {
  if (!next && !previous) return null;
  return (
    <nav className="pager" aria-label={label}>
      {previous ? (
        <Link className="button button--quiet" to={to(cursorOf(previous))} rel="prev">
          {back}
        </Link>
      ) : (
        <span />
      )}
      {next && (
        <Link className="button button--quiet" to={to(cursorOf(next))} rel="next">
          {forward}
        </Link>
      )}
    </nav>
  );
}
