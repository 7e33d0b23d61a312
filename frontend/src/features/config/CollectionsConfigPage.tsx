import { useQuery } from '@tanstack/react-query';
import { Link, useLocation } from 'react-router';

import { configCollectionsQuery } from '../../lib/api/config/collections';
import type { CollectionConfig } from '../../lib/api/types';
import { AccessBadge } from '../../components/AccessBadge';
import { DataTable } from '../../components/DataTable';
import { Loaded } from '../../components/Loaded';
import { OutcomeNotice } from '../../components/OutcomeNotice';
import { describeSeconds } from './collectionForm';

/** Every collection with its archive policy and who may deliver it. */
export function CollectionsConfigPage() {
  const collections = useQuery(configCollectionsQuery());
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  return (
    <section className="page" aria-labelledby="config-collections-heading">
      <div className="page__header page__header--actions">
        <div>
          <h1 id="config-collections-heading">Collections</h1>
          <p className="page__lead">Products, their archive policy and completeness targets.</p>
        </div>
        <Link className="button" to="/config/collections/new">
          New collection
        </Link>
      </div>
      <OutcomeNotice outcome={notice ? { ok: true, text: notice } : null} />
      <Loaded query={collections} what="the collections">
        {(rows) => (
          <DataTable<CollectionConfig>
            caption="Collections"
            captionHidden
            rows={rows}
            rowKey={(row) => row.id}
            empty={<p>No collection yet.</p>}
            columns={[
              {
                label: 'Collection',
                rowHeader: true,
                cell: (row) => (
                  <Link to={`/config/collections/${encodeURIComponent(row.key)}`}>{row.key}</Link>
                ),
              },
              { label: 'Title', cell: (row) => row.title, className: 'wrap' },
              { label: 'Access', cell: (row) => <AccessBadge access={row.access ?? 'public'} /> },
              {
                label: 'Copies',
                cell: (row) => (row.policy ? row.policy.copies.join(' + ') : 'no policy'),
              },
              {
                label: 'Cache days',
                numeric: true,
                cell: (row) => row.policy?.cache_residency_days ?? '—',
              },
              { label: 'Cadence', cell: (row) => describeSeconds(row.cadence_seconds) },
              { label: 'Providers', cell: (row) => row.providers.join(', ') || '—' },
            ]}
          />
        )}
      </Loaded>
    </section>
  );
}
