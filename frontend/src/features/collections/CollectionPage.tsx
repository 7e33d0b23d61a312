import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';

import { collectionQuery } from '../../lib/api/collections/collection';
import type { CollectionDetail, CollectionVariable, ExtentSource } from '../../lib/api/types';
import { AccessBadge } from '../../components/AccessBadge';
import { DataTable, type Column } from '../../components/DataTable';
import { Facts, type Fact } from '../../components/Facts';
import { LoadedPage } from '../../components/LoadedPage';
import { EmptyState } from '../../components/StatusMessage';
import { LazyBoxMap } from '../../components/map/LazyBoxMap';
import { formatBBox, formatCount, formatUtc } from '../../lib/format';
import './CollectionPage.css';

/** Where an extent comes from, said so a reader knows how much to trust it. */
const SOURCE: Record<ExtentSource, string> = {
  declared: 'Declared by the data provider',
  granules: 'Computed from the archived granules',
  none: 'Not known: none declared and no granule archived yet',
};

const VARIABLE_COLUMNS: Column<CollectionVariable>[] = [
  { label: 'Name', rowHeader: true, cell: (v) => <span className="mono wrap">{v.name}</span> },
  { label: 'Units', cell: (v) => v.units || '—' },
  { label: 'Long name', cell: (v) => v.long_name || '—' },
];

export function CollectionPage() {
  const { key = '' } = useParams();
  const collection = useQuery(collectionQuery(key));
  const back = (
    <p className="breadcrumb">
      <Link to="/">← Collections</Link>
    </p>
  );
  return (
    <LoadedPage query={collection} title={key} what={`collection ${key}`} back={back}>
      {(data) => <CollectionView collection={data} back={back} />}
    </LoadedPage>
  );
}

function searchCollectionPath(key: string): string {
  return `/search?collection=${encodeURIComponent(key)}`;
}

function CollectionView({ collection, back }: { collection: CollectionDetail; back: ReactNode }) {
  const { spatial_extent: space, temporal_extent: time } = collection;
  const facts: Fact[] = [
    ['Short name', <span className="mono">{collection.short_name}</span>],
    ['Version', <span className="mono">{collection.version}</span>],
    ['Processing level', collection.processing_level || '—'],
    ['Platform', collection.platform || '—'],
    ['Instrument', collection.instrument || '—'],
    ['Granules', formatCount(collection.granule_count)],
    ['Access', <AccessBadge access={collection.access} />],
  ];
  return (
    <section className="page collection-page" aria-labelledby="collection-heading">
      {back}
      <div className="page__header page__header--actions">
        <div>
          <p className="mono collection-page__key">{collection.key}</p>
          <h1 id="collection-heading">{collection.title || collection.key}</h1>
        </div>
        <Link className="button" to={searchCollectionPath(collection.key)}>
          Search this collection
        </Link>
      </div>

      <Facts facts={facts} />

      <section className="page-section" aria-labelledby="abstract-heading">
        <h2 id="abstract-heading">Abstract</h2>
        {collection.description ? (
          <p className="collection-page__abstract">{collection.description}</p>
        ) : (
          <p className="muted">The provider has not written an abstract.</p>
        )}
      </section>

      <section className="page-section" aria-labelledby="cite-heading">
        <h2 id="cite-heading">DOI and citation</h2>
        <Facts
          className="figures collection-page__cite"
          facts={[
            [
              'DOI',
              collection.doi_url ? (
                <a href={collection.doi_url} rel="noreferrer" className="mono wrap">
                  {collection.doi}
                </a>
              ) : (
                <span className="muted">No DOI registered</span>
              ),
            ],
          ]}
        />
        {collection.citation ? (
          <Citation text={collection.citation} />
        ) : (
          <p className="muted">No citation given; cite the DOI.</p>
        )}
      </section>

      <section className="page-section" aria-labelledby="variables-heading">
        <h2 id="variables-heading">Variables</h2>
        {collection.variables.length ? (
          <DataTable
            columns={VARIABLE_COLUMNS}
            rows={collection.variables}
            rowKey={(v) => v.name}
            labelledBy="variables-heading"
            wrapperClassName="table-card"
          />
        ) : (
          <EmptyState title="No variables listed">
            <p>The provider has not described the variables of this collection.</p>
          </EmptyState>
        )}
      </section>

      <section className="page-section" aria-labelledby="extent-heading">
        <h2 id="extent-heading">Coverage</h2>
        <Facts
          facts={[
            [
              'Time',
              time.start
                ? `${formatUtc(time.start)} – ${time.end ? formatUtc(time.end) : 'ongoing'}`
                : 'Unknown',
            ],
            ['Time source', SOURCE[time.source]],
            ['Area (W,S,E,N)', space.bbox ? formatBBox(space.bbox) : 'Unknown'],
            ['Area source', SOURCE[space.source]],
          ]}
        />
        {space.bbox && (
          <div className="collection-page__map">
            <LazyBoxMap
              label={`Area covered by ${collection.key}`}
              box={space.bbox}
              boxStyle="outline"
              focus={space.bbox}
            />
          </div>
        )}
      </section>
    </section>
  );
}

/** The citation, with a button that copies it; says so when the browser will not let it. */
function Citation({ text }: { text: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  }
  return (
    <div className="collection-page__citation">
      <blockquote>{text}</blockquote>
      <div className="actions">
        <button type="button" className="button button--small" onClick={() => void copy()}>
          Copy citation
        </button>
        <span role="status" className="hint">
          {copied === 'yes' && 'Copied to the clipboard.'}
          {copied === 'failed' && 'The browser would not copy it; select the text instead.'}
        </span>
      </div>
    </div>
  );
}
