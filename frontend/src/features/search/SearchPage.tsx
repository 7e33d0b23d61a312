import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';

import { granuleSearchQuery, searchSummaryQuery } from '../../lib/api/granules/search';
import { subscribeToSearchPath } from '../../lib/searchSubscription';
import { LazyBoxMap } from '../../components/map/LazyBoxMap';
import { ShapeUpload } from '../../components/map/ShapeUpload';
import { rememberSearchArea } from '../../lib/searchArea';
import { readShape, type Geometry } from '../../lib/shapeParam';
import type { Footprint } from '../../components/map/types';
import { SearchForm } from './SearchForm';
import { SearchResults } from './SearchResults';
import { SearchTimeline } from './SearchTimeline';
import { useSearchCollections } from './searchCollections';
import {
  granuleParams,
  matchingFilters,
  readSearch,
  writeSearch,
  type SearchState,
} from './searchState';
import './search.css';

export function SearchPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const address = searchParams.toString();
  // The address is the search; the form edits a draft of it until it is applied.
  const search = useMemo(() => readSearch(new URLSearchParams(address)), [address]);
  const [draft, setDraft] = useState(search);
  const [drafted, setDrafted] = useState(search);
  if (drafted !== search) {
    // A new address (applied, or the browser's back button) replaces the draft.
    setDrafted(search);
    setDraft(search);
  }
  // A row hovered or focused lights its footprint; a footprint clicked marks its row.
  const [highlight, setHighlight] = useState<number | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  // On a phone the map sits behind a toggle before the results (Earthdata Search's way), so
  // the first results stay on the first screen and the area tools are one tap away.
  const narrow = useNarrow();
  const [mapOpen, setMapOpen] = useState(false);

  function apply(next: SearchState) {
    // A changed search starts again at its first page.
    setSearchParams(writeSearch({ ...next, cursor: null }));
  }

  const collections = useSearchCollections(search);
  // One request answers the first page of results, the facets and the timeline; a later page
  // keeps the first page's facets and timeline (the same filters).
  const params = granuleParams(search);
  const granules = useQuery(granuleSearchQuery(params));
  const summary = useQuery({ ...searchSummaryQuery(params), enabled: Boolean(params.cursor) });
  const counted = params.cursor ? summary : granules;
  const facets = counted.data?.facets;
  // The timeline counts every granule of the search, so it also says how many match.
  const timeline = counted.data?.timeline;
  const total = timeline && !counted.isPlaceholderData ? timeline.total : null;
  const shapeLost = readShape(searchParams.get('shape')).missing;
  // The cart offers this area to cut the ordered files to.
  useEffect(() => rememberSearchArea({ bbox: search.bbox, shape: search.shape }), [search]);
  // A drawn box and a drawn or uploaded shape replace each other.
  const applyShape = (shape: Geometry) => apply({ ...draft, shape, bbox: null });

  const footprints: Footprint[] = useMemo(
    () =>
      (granules.data?.results ?? []).flatMap((granule) =>
        granule.bbox
          ? [
              {
                id: granule.id,
                bbox: granule.bbox,
                footprint: granule.footprint as Geometry | null,
                label: granule.granule_id,
              },
            ]
          : [],
      ),
    [granules.data],
  );

  return (
    <section className="page search-page" aria-labelledby="search-heading">
      <div className="page__header">
        <h1 id="search-heading">Search granules</h1>
        <p className="page__lead">
          Pick collections, draw or type an area, choose a time range and filter by attributes. The
          address of this page keeps the whole search, so it can be bookmarked and shared.
        </p>
        <p>
          <Link className="button button--quiet" to={subscribeToSearchPath(searchParams)}>
            Subscribe to this search
          </Link>
        </p>
      </div>

      <div className="search-layout">
        <SearchForm
          draft={draft}
          onDraftChange={setDraft}
          onApply={apply}
          collections={collections}
          facets={facets}
        />
        <div className="search-main">
          {shapeLost && (
            <p className="notice notice--error" role="alert">
              This link&apos;s shape was kept in another browser, so it is not searched here. Draw
              or upload it again.
            </p>
          )}
          {narrow && (
            <button
              type="button"
              className="button button--quiet search-map__toggle"
              aria-expanded={mapOpen}
              aria-controls="search-map"
              onClick={() => setMapOpen((open) => !open)}
            >
              {mapOpen ? 'Hide the map' : 'Map and area tools'}
              {!mapOpen && (search.bbox || search.shape) ? ' (an area is set)' : ''}
            </button>
          )}
          <div className="search-map" id="search-map" hidden={narrow && !mapOpen}>
            {(!narrow || mapOpen) && (
              <LazyBoxMap
                label="Map of the search box and the footprints of the granules found"
                box={search.bbox}
                onBoxChange={(bbox) => apply({ ...draft, bbox, shape: null })}
                shape={search.shape}
                onShapeChange={applyShape}
                tools={<ShapeUpload onShape={applyShape} />}
                footprints={footprints}
                highlight={highlight ?? selected}
                onFootprintSelect={setSelected}
              />
            )}
          </div>
          <div className="search-main__timeline">
            <SearchTimeline
              timeline={timeline}
              onNarrow={(start, end) => apply({ ...search, start, end })}
            />
          </div>
          <SearchResults
            query={granules}
            search={search}
            address={address}
            total={total}
            filters={matchingFilters(search)}
            onApply={apply}
            onHighlight={setHighlight}
            selected={selected}
          />
        </div>
      </div>
    </section>
  );
}

/** Whether the window is phone-narrow (the layout's one-column width), following resizes. */
function useNarrow(): boolean {
  const query = '(max-width: 60rem)';
  const [narrow, setNarrow] = useState(() => window.matchMedia?.(query).matches ?? false);
  useEffect(() => {
    const list = window.matchMedia?.(query);
    if (!list) return;
    const changed = () => setNarrow(list.matches);
    list.addEventListener('change', changed);
    return () => list.removeEventListener('change', changed);
  }, []);
  return narrow;
}
