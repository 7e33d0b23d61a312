import { useQuery, type UseQueryResult } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';

import { collectionsQuery } from '../../lib/api/collections/collections';
import type { Collection, Page } from '../../lib/api/types';
import { AccessBadge } from '../../components/AccessBadge';
import { DataTable, type Column } from '../../components/DataTable';
import { LinkPager } from '../../components/LinkPager';
import { EmptyState, ErrorMessage, Loading } from '../../components/StatusMessage';
import './CollectionsPage.css';

/** Wait for a pause in typing before asking the API again. */
const FILTER_DELAY_MS = 300;

const countFormat = new Intl.NumberFormat('en');

export function CollectionsPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  // Filter and cursor live in the address so a filtered page can be bookmarked and shared.
  const q = searchParams.get('q') ?? '';
  const cursor = searchParams.get('cursor');
  const collections = useQuery(collectionsQuery({ q, cursor }));

  const [text, setText] = useState(q);
  const filterId = useId();

  useEffect(() => {
    if (text.trim() === q) return;
    // Typing should not flood the history, hence replace.
    const timer = setTimeout(
      () => setSearchParams(filterParams(text), { replace: true }),
      FILTER_DELAY_MS,
    );
    return () => clearTimeout(timer);
  }, [text, q, setSearchParams]);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (text.trim() !== q) setSearchParams(filterParams(text), { replace: true });
  }

  return (
    <section className="page" aria-labelledby="collections-heading">
      <div className="page__header">
        <h1 id="collections-heading">Collections</h1>
        <p className="page__lead">
          Data products held in the archive. A collection is named by its short name and version and
          holds the granules delivered for it.
        </p>
      </div>

      <form className="filter" role="search" onSubmit={onSubmit}>
        <label htmlFor={filterId}>Filter collections</label>
        <input
          id={filterId}
          type="search"
          name="q"
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder="Name, title, platform or instrument"
          autoComplete="off"
          spellCheck={false}
        />
      </form>

      <CollectionsResult query={collections} q={q} />
    </section>
  );
}

/** A new filter starts again from the first page, so the cursor is dropped. */
function filterParams(text: string): URLSearchParams {
  const params = new URLSearchParams();
  if (text.trim()) params.set('q', text.trim());
  return params;
}

function CollectionsResult({ query, q }: { query: UseQueryResult<Page<Collection>>; q: string }) {
  if (query.isPending) return <Loading>Loading collections…</Loading>;

  if (query.isError) {
    return (
      <ErrorMessage
        title="Could not load collections"
        detail={query.error.message}
        error={query.error}
        onRetry={() => void query.refetch()}
      />
    );
  }

  const { results, next, previous } = query.data;
  const busy = query.isFetching && query.isPlaceholderData;

  if (results.length === 0) {
    return q ? (
      <EmptyState title={`No collections match “${q}”`}>
        <p>Try fewer or different words.</p>
      </EmptyState>
    ) : (
      <EmptyState title="No collections yet">
        <p>Collections appear here once a data provider or operator defines them.</p>
      </EmptyState>
    );
  }

  const summary = `Showing ${results.length} ${results.length === 1 ? 'collection' : 'collections'}${
    q ? ` matching “${q}”` : ''
  }`;

  return (
    <>
      <p className="result-summary" aria-live="polite">
        {summary}
      </p>
      <DataTable
        columns={COLUMNS}
        rows={results}
        rowKey={(collection) => collection.id}
        labelledBy="collections-heading"
        busy={busy}
        className="collections-table"
        wrapperClassName="collections"
      />
      <LinkPager
        label="Collection pages"
        next={next}
        previous={previous}
        to={(cursor) => {
          const params = new URLSearchParams();
          if (q) params.set('q', q);
          // The API's link back to page one may carry no cursor at all.
          if (cursor) params.set('cursor', cursor);
          const search = params.toString();
          return { search: search ? `?${search}` : '' };
        }}
      />
    </>
  );
}

const COLUMNS: Column<Collection>[] = [
  {
    label: 'Collection',
    rowHeader: true,
    cell: (collection) => (
      <Link className="collection-key" to={`/collections/${encodeURIComponent(collection.key)}`}>
        {collection.key}
      </Link>
    ),
  },
  { label: 'Title', cell: (collection) => collection.title || '—' },
  { label: 'Level', cell: (collection) => collection.processing_level || '—' },
  {
    label: 'Platform / instrument',
    cell: (collection) =>
      [collection.platform, collection.instrument].filter(Boolean).join(' / ') || '—',
  },
  { label: 'Access', cell: (collection) => <AccessBadge access={collection.access} /> },
  {
    label: 'Granules',
    numeric: true,
    cell: (collection) => countFormat.format(collection.granule_count),
  },
];
