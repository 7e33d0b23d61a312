import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useLocation, useParams } from 'react-router';

import { ApiError } from '../../lib/api/client';
import { granuleQuery } from '../../lib/api/granules/granule';
import type { GranuleDetail, GranuleGone, StoredCopy, StoredFile } from '../../lib/api/types';
import { Facts, type Fact } from '../../components/Facts';
import { GranuleName } from '../../components/GranuleName';
import { type Column, DataTable } from '../../components/DataTable';
import { checksumColumn, sizeColumn } from '../../components/fileColumns';
import { LoadedPage } from '../../components/LoadedPage';
import { ResidencyBadge } from '../../components/ResidencyBadge';
import { AddToCartButton } from '../../components/cart/AddToCartButton';
import { useCart } from '../../components/cart/useCart';
import { LazyBoxMap } from '../../components/map/LazyBoxMap';
import { formatBBox, formatBytes, formatUtc } from '../../lib/format';
import { MEDIUM_NAMES } from '../../lib/media';
import { AttributeTable, AttributeValue, attributeTitle, isTable } from './attributes';
import '../../components/portal.css';
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
  if (granule.error instanceof ApiError && granule.error.status === 410) {
    return <RetiredGranule id={granuleId} error={granule.error} back={back} />;
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
  const facts = attributes.filter(([, value]) => !isTable(value));
  const tables = attributes.flatMap(([name, value]) => (isTable(value) ? [{ name, value }] : []));
  const needOrder = granule.files.filter((file) => file.download_url === null).length;
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
          <h1 id="granule-heading" className="mono wrap-tokens granule-page__title">
            <GranuleName name={granule.granule_id} />
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
              ...facts.map(([name, value]): Fact => [
                <span className="mono">{name}</span>,
                <AttributeValue value={value} />,
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

      {tables.map(({ name, value }) => (
        <section key={name} className="page-section" aria-labelledby={`attr-${name}`}>
          <h2 id={`attr-${name}`}>{attributeTitle(name)}</h2>
          <AttributeTable name={name} rows={value} />
        </section>
      ))}

      <section className="page-section" aria-labelledby="files-heading">
        <h2 id="files-heading">Files and where they live</h2>
        <p className={needOrder ? 'notice notice--tape' : 'notice notice--ok'}>
          {needOrder
            ? `${needOrder} of ${granule.files.length} files are on tape only: an order recalls them into the disk cache first, which takes minutes. ${loggedIn ? 'The others download now.' : ''}`
            : `Every file is in the disk cache or the object store: ${loggedIn ? 'download each below, or order them all' : 'log in to download them'}.`}
        </p>
        <DataTable
          columns={loggedIn ? [...FILE_COLUMNS, DOWNLOAD_COLUMN] : FILE_COLUMNS}
          rows={granule.files}
          rowKey={(file) => file.id}
          caption={`Files of ${granule.granule_id}`}
          captionHidden
        />
      </section>
    </section>
  );
}

/** A withdrawn or deleted granule: what happened, when and why, instead of a bare error. */
function RetiredGranule({ id, error, back }: { id: number; error: ApiError; back: ReactNode }) {
  const gone = error.body as Partial<GranuleGone> | undefined;
  const state = gone?.state ?? 'withdrawn';
  return (
    <section className="page" aria-labelledby="granule-heading">
      {back}
      <h1 id="granule-heading">
        Granule {id} was {state}
      </h1>
      <div className="status status--error" role="alert">
        <p className="status__title">
          {state === 'withdrawn' ? 'Withdrawn' : 'Deleted'}{' '}
          {gone?.retired_at ? `on ${formatUtc(gone.retired_at)}` : ''}
        </p>
        <p>{error.detail}</p>
      </div>
      <p>
        It is no longer offered for search or order
        {state === 'withdrawn' ? '; an operator may restore it' : ''}.
      </p>
    </section>
  );
}

/** A direct download where no recall is needed (cache or object store), else "order". */
const DOWNLOAD_COLUMN: Column<StoredFile> = {
  label: 'Get',
  cell: (file) =>
    file.download_url ? (
      <a
        className="button button--small"
        href={file.download_url}
        download={file.name}
        aria-label={`Download ${file.name}`}
      >
        Download
      </a>
    ) : (
      <span className="muted">Order it: on tape only</span>
    ),
};

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
          The browse image could not be shown now; try again in a minute.
        </p>
      ) : (
        <img src={url} alt={`Browse image of ${granule}`} onError={() => setFailed(true)} />
      )}
      <figcaption className="hint">Browse image</figcaption>
    </figure>
  );
}
