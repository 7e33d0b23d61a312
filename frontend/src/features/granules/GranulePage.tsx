import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useLocation, useParams } from 'react-router';

import { granuleQuery } from '../../lib/api/granules/granule';
import type { GranuleDetail, StoredCopy, StoredFile } from '../../lib/api/types';
import { Facts, type Fact } from '../../components/Facts';
import { type Column, DataTable } from '../../components/DataTable';
import { checksumColumn, sizeColumn } from '../../components/fileColumns';
import { LoadedPage } from '../../components/LoadedPage';
import { ResidencyBadge } from '../../components/ResidencyBadge';
import { AddToCartButton } from '../../components/cart/AddToCartButton';
import { useCart } from '../../components/cart/useCart';
import { LazyBoxMap } from '../../components/map/LazyBoxMap';
import { formatBBox, formatBytes, formatUtc } from '../../lib/format';
import { MEDIUM_NAMES } from '../../lib/media';
import './granules.css';

const ROLES: Record<string, string> = {
  data: 'Data',
  metadata: 'Metadata',
  browse: 'Browse image',
  qa: 'Quality assessment',
};

export function GranulePage() {
  const { id = '' } = useParams();
  const location = useLocation();
  const granuleId = Number(id);
  const granule = useQuery({
    ...granuleQuery(granuleId),
    enabled: Number.isInteger(granuleId) && granuleId > 0,
  });
  const from = (location.state as { search?: string } | null)?.search;
  const back = (
    <p className="breadcrumb">
      <Link to={from !== undefined ? `/search${from ? `?${from}` : ''}` : '/search'}>
        ← {from !== undefined ? 'Back to the search' : 'Search granules'}
      </Link>
    </p>
  );

  if (!Number.isInteger(granuleId) || granuleId <= 0) {
    return (
      <section className="page">
        {back}
        <h1>Granule not found</h1>
        <p>“{id}” is not a granule number.</p>
      </section>
    );
  }
  return (
    <LoadedPage
      query={granule}
      title={`Granule ${granuleId}`}
      what={`granule ${granuleId}`}
      back={back}
    >
      {(data) => <GranuleView granule={data} back={back} />}
    </LoadedPage>
  );
}

function GranuleView({ granule, back }: { granule: GranuleDetail; back: ReactNode }) {
  const { loggedIn } = useCart();
  const location = useLocation();
  const attributes = Object.entries(granule.attributes);
  const notCached = granule.files.filter((file) => !file.in_cache).length;
  return (
    <section className="page granule-page" aria-labelledby="granule-heading">
      {back}
      <div className="page__header page__header--actions">
        <div>
          <p className="granule-page__collection">
            <Link to={`/collections/${encodeURIComponent(granule.collection)}`}>
              {granule.collection}
            </Link>
          </p>
          <h1 id="granule-heading" className="mono wrap granule-page__title">
            {granule.granule_id}
          </h1>
        </div>
        <div className="granule-page__actions">
          <ResidencyBadge residency={granule.residency} />
          {loggedIn ? (
            <AddToCartButton granule={granule.id} label={granule.granule_id} />
          ) : (
            <Link className="button" to={`/login?next=${encodeURIComponent(location.pathname)}`}>
              Log in to order
            </Link>
          )}
        </div>
      </div>

      <div className="granule-page__grid">
        <section className="granule-page__card" aria-labelledby="facts-heading">
          <h2 id="facts-heading">Metadata</h2>
          <Facts
            className="facts"
            facts={[
              ['Start', formatUtc(granule.temporal_start)],
              ['End', formatUtc(granule.temporal_end)],
              [
                'Bounding box (W,S,E,N)',
                <span className="mono">
                  {granule.bbox ? formatBBox(granule.bbox).replaceAll(',', ', ') : 'none'}
                </span>,
              ],
              [
                'Size',
                `${formatBytes(granule.total_size)} in ${granule.files.length} ${granule.files.length === 1 ? 'file' : 'files'}`,
              ],
              [
                'Version',
                <>
                  {granule.version}
                  {granule.replaces !== null && (
                    <>
                      {' '}
                      (replaces{' '}
                      <Link to={`/granules/${granule.replaces}`}>granule {granule.replaces}</Link>)
                    </>
                  )}
                </>,
              ],
              ['Archived', formatUtc(granule.archived_at)],
              ...attributes.map(([name, value]): Fact => [
                <span className="mono">{name}</span>,
                typeof value === 'object' ? JSON.stringify(value) : String(value),
              ]),
            ]}
          />
        </section>

        <div className="granule-page__side">
          {granule.browse_url && (
            <BrowseImage url={granule.browse_url} granule={granule.granule_id} />
          )}
          {granule.bbox && (
            <LazyBoxMap
              label={`Footprint of ${granule.granule_id}`}
              box={null}
              footprints={[{ id: granule.id, bbox: granule.bbox, label: granule.granule_id }]}
              focus={granule.bbox}
            />
          )}
        </div>
      </div>

      <section className="page-section" aria-labelledby="files-heading">
        <h2 id="files-heading">Files and where they live</h2>
        <p className={notCached ? 'notice notice--tape' : 'notice notice--ok'}>
          {notCached
            ? `${notCached} of ${granule.files.length} files are ${archivedOnly(granule.files)}: an order recalls them into the disk cache first${recallTakes(granule.files)}.`
            : 'Every file is in the disk cache: an order is ready at once.'}
        </p>
        <DataTable
          columns={FILE_COLUMNS}
          rows={granule.files}
          rowKey={(file) => file.id}
          caption={`Files of ${granule.granule_id}`}
          captionHidden
        />
      </section>
    </section>
  );
}

function mediaOutOfCache(files: StoredFile[]): Set<string> {
  return new Set(files.filter((f) => !f.in_cache).flatMap((f) => f.copies.map((c) => c.medium)));
}

/** Where the files not in the cache are: tape only, the object store only, or both. */
function archivedOnly(files: StoredFile[]): string {
  const media = mediaOutOfCache(files);
  if (!media.has('object')) return 'on tape only';
  return media.has('tape')
    ? 'in the archive only (tape or object store)'
    : 'in the object store only';
}

/** A tape recall waits for a mount; an object store answers at once. */
function recallTakes(files: StoredFile[]): string {
  return mediaOutOfCache(files).has('object') ? '' : ', which takes minutes';
}

const FILE_COLUMNS: Column<StoredFile>[] = [
  {
    label: 'File',
    rowHeader: true,
    cell: (file) => (
      <span className="granule-cell">
        <span className="mono wrap">{file.name}</span>
        <span className="muted small">{ROLES[file.role] ?? file.role}</span>
      </span>
    ),
  },
  sizeColumn((file) => file.size),
  checksumColumn((file) => ({ type: file.checksum_type, value: file.checksum, fileId: file.id })),
  {
    label: 'Disk cache',
    cell: (file) => (file.in_cache ? 'In cache' : <span className="muted">Not in cache</span>),
  },
  {
    label: 'Copies',
    cell: (file) =>
      file.copies.length === 0 ? (
        <span className="muted">None yet</span>
      ) : (
        <ul className="copies">
          {file.copies.map((copy) => (
            <li key={`${copy.copy_number}-${copy.segment}`}>
              <CopyLine copy={copy} />
            </li>
          ))}
        </ul>
      ),
  },
];

/** "Copy 1: tape · V00012 in silo1" or "Copy 1: object store · bucket archive-s3, key …" (and
 * "from byte N" for a small file in a pack, a tar object many files share). */
function CopyLine({ copy }: { copy: StoredCopy }) {
  const number = copy.segment ? `${copy.copy_number}.${copy.segment}` : copy.copy_number;
  return (
    <>
      Copy {number}: {MEDIUM_NAMES[copy.medium]} ·{' '}
      {copy.medium === 'object' ? (
        <>
          bucket {copy.bucket}, key <span className="mono wrap">{copy.key}</span>
          {copy.offset ? ` from byte ${copy.offset.toLocaleString('en')}` : ''}
        </>
      ) : (
        <>
          <span className="mono">{copy.volume}</span> in {copy.silo}
        </>
      )}
      {copy.state !== 'verified' && <span className="muted"> ({copy.state})</span>}
    </>
  );
}

function BrowseImage({ url, granule }: { url: string; granule: string }) {
  const [failed, setFailed] = useState(false);
  return (
    <figure className="browse">
      {failed ? (
        <p className="browse__missing">
          The browse image could not be shown now; it may be on tape only. Ordering the granule
          brings it back.
        </p>
      ) : (
        <img src={url} alt={`Browse image of ${granule}`} onError={() => setFailed(true)} />
      )}
      <figcaption className="hint">Browse image</figcaption>
    </figure>
  );
}
