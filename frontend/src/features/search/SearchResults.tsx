import { useQuery, type UseQueryResult } from '@tanstack/react-query';
import { useEffect, useId } from 'react';
import { Link } from 'react-router';

import type { Granule, Page } from '../../lib/api/types';
import { DataTable, type Column } from '../../components/DataTable';
import { LinkPager } from '../../components/LinkPager';
import { ResidencyBadge } from '../../components/ResidencyBadge';
import { EmptyState, ErrorMessage, Loading } from '../../components/StatusMessage';
import { AddToCartButton } from '../../components/cart/AddToCartButton';
import { useCart } from '../../components/cart/useCart';
import { GranuleName } from '../../components/GranuleName';
import { granulesQuery } from '../../lib/api/granules/granules';
import { formatBytes, formatCount, formatUtcRange } from '../../lib/format';
import { AddMatchingButton } from './AddMatchingButton';
import {
  granuleParams,
  PAGE_SIZES,
  SORTS,
  wildcardSuggestion,
  writeSearch,
  type SearchState,
  type Sort,
} from './searchState';

export function SearchResults({
  query,
  search,
  address,
  total,
  filters,
  onApply,
  onHighlight,
  selected,
}: {
  query: UseQueryResult<Page<Granule>>;
  search: SearchState;
  /** The search's query string, handed to granule pages for their way back. */
  address: string;
  /** Granules matching in all, from the timeline; null while unknown. */
  total: number | null;
  /** The search as the API's filters, for adding all it matches to the cart. */
  filters: Record<string, string>;
  onApply: (next: SearchState) => void;
  onHighlight: (id: number | null) => void;
  /** The granule whose footprint was clicked on the map: its row is marked and shown. */
  selected: number | null;
}) {
  const { loggedIn } = useCart();
  const id = useId();
  useEffect(() => {
    if (selected === null) return;
    document
      .querySelector(`[data-granule="${selected}"]`)
      ?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [selected]);

  if (query.isPending) return <Loading>Searching granules…</Loading>;
  if (query.isError) {
    return (
      <ErrorMessage
        title="The search could not be run"
        detail={query.error.message}
        error={query.error}
        onRetry={() => void query.refetch()}
      />
    );
  }

  const { results, next, previous } = query.data;
  if (results.length === 0) {
    return (
      <EmptyState title="No granules match">
        <p>Widen the box or the time range, or drop an attribute filter.</p>
        <WildcardHint search={search} onApply={onApply} />
      </EmptyState>
    );
  }

  const busy = query.isFetching && query.isPlaceholderData;
  const summary =
    total === null
      ? `Showing ${results.length} granules`
      : `${formatCount(total)} ${total === 1 ? 'granule matches' : 'granules match'}; showing ${results.length}`;

  const columns: Column<Granule>[] = [
    {
      label: 'Granule',
      rowHeader: true,
      cell: (granule) => (
        <span className="granule-cell">
          <Thumbnail url={granule.browse_url} name={granule.granule_id} />
          <span className="granule-cell__text">
            <Link
              to={`/granules/${granule.id}`}
              state={{ search: address }}
              className="mono wrap-tokens"
              onFocus={() => onHighlight(granule.id)}
              onBlur={() => onHighlight(null)}
            >
              <GranuleName name={granule.granule_id} />
            </Link>
            <span className="muted small">{granule.collection}</span>
          </span>
        </span>
      ),
    },
    {
      label: 'Time',
      cell: (granule) => formatUtcRange(granule.temporal_start, granule.temporal_end),
    },
    { label: 'Size', numeric: true, cell: (granule) => formatBytes(granule.total_size) },
    { label: 'Where', cell: (granule) => <ResidencyBadge residency={granule.residency} /> },
  ];
  if (loggedIn) {
    columns.push({
      label: 'Cart',
      cell: (granule) => <AddToCartButton granule={granule.id} label={granule.granule_id} />,
    });
  }

  return (
    <section className="search-results" aria-labelledby="results-heading">
      <div className="search-results__head">
        <h2 id="results-heading">Results</h2>
        <p className="result-summary" aria-live="polite">
          {summary}
        </p>
      </div>
      <div className="search-results__controls">
        <div className="field field--inline">
          <label htmlFor={`${id}-sort`}>Sort</label>
          <select
            id={`${id}-sort`}
            value={search.sort}
            onChange={(event) => onApply({ ...search, sort: event.target.value as Sort })}
          >
            {SORTS.map((sort) => (
              <option key={sort.value} value={sort.value}>
                {sort.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field field--inline">
          <label htmlFor={`${id}-size`}>Per page</label>
          <select
            id={`${id}-size`}
            value={search.pageSize}
            onChange={(event) => onApply({ ...search, pageSize: Number(event.target.value) })}
          >
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </div>
        {loggedIn && <AddMatchingButton filters={filters} total={total} />}
      </div>
      {!loggedIn && (
        <p className="hint">
          <Link
            to={`/login?next=${encodeURIComponent(address ? `/search?${address}` : '/search')}`}
          >
            Log in
          </Link>{' '}
          to put granules in a cart and order them.
        </p>
      )}
      <DataTable
        columns={columns}
        rows={results}
        rowKey={(granule) => granule.id}
        rowProps={(granule) => ({
          onMouseEnter: () => onHighlight(granule.id),
          onMouseLeave: () => onHighlight(null),
          'data-granule': String(granule.id),
          className: granule.id === selected ? 'is-selected' : undefined,
          'aria-current': granule.id === selected ? true : undefined,
        })}
        caption={`Granules found, ${sortLabel(search.sort).toLowerCase()}`}
        captionHidden
        busy={busy}
      />
      <LinkPager
        label="Result pages"
        next={next}
        previous={previous}
        to={(cursor) => ({
          pathname: '/search',
          search: `?${writeSearch({ ...search, cursor }).toString()}`.replace(/^\?$/, ''),
        })}
      />
    </section>
  );
}

/**
 * An id typed without `*` is matched whole, so a prefix finds nothing: offer the search with
 * the wildcard, saying how many granules it would find.
 */
function WildcardHint({
  search,
  onApply,
}: {
  search: SearchState;
  onApply: (next: SearchState) => void;
}) {
  const suggested = wildcardSuggestion(search.q);
  const wider = { ...search, q: suggested ?? '', cursor: null };
  const found = useQuery(granulesQuery(granuleParams(wider), suggested !== null));
  if (suggested === null) return null;
  const count = found.data?.results.length ?? 0;
  const many = found.data?.next ? `${formatCount(count)} or more` : formatCount(count);
  return (
    <p className="wildcard-hint" role="status">
      An id is matched whole unless it has a wildcard.{' '}
      {found.isSuccess && count === 0 ? (
        <>
          No granule id starts with <span className="mono">{search.q}</span> either.
        </>
      ) : (
        <>
          <button type="button" className="button button--small" onClick={() => onApply(wider)}>
            Search for <span className="mono">{suggested}</span>
          </button>{' '}
          {found.isSuccess && (
            <span className="muted">
              {many} {count === 1 ? 'granule' : 'granules'}
            </span>
          )}
        </>
      )}
    </p>
  );
}

function sortLabel(sort: Sort): string {
  return SORTS.find((s) => s.value === sort)?.label ?? '';
}

/** The granule's browse image in a fixed box, loaded only when scrolled to. */
function Thumbnail({ url, name }: { url: string | null; name: string }) {
  if (!url) return <span className="granule-thumb granule-thumb--none" aria-hidden="true" />;
  return (
    <img
      className="granule-thumb"
      src={url}
      alt={`Browse image of ${name}`}
      loading="lazy"
      decoding="async"
      width={64}
      height={64}
    />
  );
}
