import { cursorOf } from '../lib/api/client';
import type { Page } from '../lib/api/types';

/** Newer / older buttons over a cursor-paged list whose cursor lives in the page's state. */
export function CursorPager({
  page,
  label,
  onCursor,
}: {
  page: Page<unknown>;
  label: string;
  onCursor: (cursor: string | null) => void;
}) {
  if (!page.next && !page.previous) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button
        type="button"
        className="button button--quiet"
        disabled={!page.previous}
        onClick={() => onCursor(cursorOf(page.previous))}
      >
        ← Newer
      </button>
      <button
        type="button"
        className="button button--quiet"
        disabled={!page.next}
        onClick={() => onCursor(cursorOf(page.next))}
      >
        Older →
      </button>
    </nav>
  );
}
