import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';

import { configKeys } from '../../lib/api/config/keys';
import { configProvidersQuery, createProvider } from '../../lib/api/config/providers';
import type { ProviderConfig } from '../../lib/api/types';
import { DataTable } from '../../components/DataTable';
import { TextField } from '../../components/Field';
import { Loaded } from '../../components/Loaded';
import { errorsOf } from './errors';

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
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn: () => createProvider({ name: name.trim(), title: title.trim() }),
    onSuccess: async (made) => {
      await queryClient.invalidateQueries({ queryKey: configKeys.all });
      await navigate(`/config/providers/${encodeURIComponent(made.name)}`);
    },
  });
  const errors = errorsOf(save.error);
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate();
  }
  return (
    <form className="form-card page-section config-form__inline" onSubmit={onSubmit} noValidate>
      <h2>New provider</h2>
      {save.isError && !errors.name && (
        <p className="field-error" role="alert">
          {save.error.message}
        </p>
      )}
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
      <div className="actions">
        <button className="button" type="submit" disabled={save.isPending}>
          Add provider
        </button>
      </div>
    </form>
  );
}
