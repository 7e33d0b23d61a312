import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';

import { configProvidersQuery, createProvider } from '../../lib/api/config/providers';
import type { ProviderConfig } from '../../lib/api/types';
import { ConfigForm } from '../../components/ConfigForm';
import { DataTable } from '../../components/DataTable';
import { TextField } from '../../components/Field';
import { Loaded } from '../../components/Loaded';

/** Providers, their staging areas, members and the collections they may deliver. */
export function ProvidersConfigPage() {
  const providers = useQuery(configProvidersQuery());
  return (
    <section className="page" aria-labelledby="config-providers-heading">
      <div className="page__header">
        <h1 id="config-providers-heading">Providers</h1>
        <p className="page__lead">Who delivers, from which staging area, and what.</p>
      </div>
      <Loaded query={providers} what="the providers">
        {(rows) => (
          <DataTable<ProviderConfig>
            caption="Providers"
            captionHidden
            rows={rows}
            rowKey={(row) => row.name}
            empty={<p>No provider yet.</p>}
            columns={[
              {
                label: 'Provider',
                rowHeader: true,
                cell: (row) => (
                  <Link to={`/config/providers/${encodeURIComponent(row.name)}`}>{row.name}</Link>
                ),
              },
              { label: 'Title', cell: (row) => row.title || '—' },
              { label: 'Members', cell: (row) => (row.members ?? []).join(', ') || '—' },
              {
                label: 'May deliver',
                cell: (row) => (row.collections ?? []).join(', ') || '—',
                className: 'wrap',
              },
              { label: 'Staging area', cell: (row) => row.staging_area, className: 'mono wrap' },
            ]}
          />
        )}
      </Loaded>
      <NewProvider />
    </section>
  );
}

function NewProvider() {
  const [name, setName] = useState('');
  const [title, setTitle] = useState('');
  const navigate = useNavigate();
  return (
    <ConfigForm
      mutationFn={() => createProvider({ name: name.trim(), title: title.trim() })}
      onSaved={(made) => navigate(`/config/providers/${encodeURIComponent(made.name)}`)}
      className="config-form__inline"
      title="New provider"
      submit="Add provider"
      notice={(save, errors) =>
        save.isError &&
        !errors.name && (
          <p className="field-error" role="alert">
            {save.error.message}
          </p>
        )
      }
    >
      {(errors) => (
        <div className="config-form__row">
          <TextField
            id="np-name"
            label="Name (its staging area's)"
            value={name}
            onChange={setName}
            error={errors.name}
          />
          <TextField
            id="np-title"
            label="Title"
            value={title}
            onChange={setTitle}
            error={errors.title}
          />
        </div>
      )}
    </ConfigForm>
  );
}
