import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';

import { configCollectionsQuery } from '../../lib/api/config/collections';
import { configKeys } from '../../lib/api/config/keys';
import { configProviderQuery, updateProvider } from '../../lib/api/config/provider';
import type { ProviderConfig } from '../../lib/api/types';
import { Field, TextField, invalid } from '../../components/Field';
import { LoadedPage } from '../../components/LoadedPage';
import { OutcomeNotice } from '../../components/OutcomeNotice';
import { errorsOf, listOf } from '../../lib/api/configErrors';

const back = (
  <p className="breadcrumb">
    <Link to="/config/providers">Providers</Link> /
  </p>
);

/** /config/providers/:name: title, contact, members and the collections it may deliver. */
export function ProviderFormPage() {
  const { name = '' } = useParams();
  const provider = useQuery(configProviderQuery(name));
  return (
    <LoadedPage query={provider} title={name} what="this provider" back={back}>
      {(data) => <ProviderForm key={data.name} original={data} />}
    </LoadedPage>
  );
}

function ProviderForm({ original }: { original: ProviderConfig }) {
  const queryClient = useQueryClient();
  const collections = useQuery(configCollectionsQuery());
  const [title, setTitle] = useState(original.title ?? '');
  const [email, setEmail] = useState(original.contact_email ?? '');
  const [members, setMembers] = useState((original.members ?? []).join(', '));
  const [delivers, setDelivers] = useState<string[]>(original.collections ?? []);
  const [reason, setReason] = useState('');
  const save = useMutation({
    mutationFn: () =>
      updateProvider(original.name, {
        title,
        contact_email: email,
        members: listOf(members),
        collections: delivers,
        reason,
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: configKeys.all }),
  });
  const errors = errorsOf(save.error);
  const toggle = (key: string) =>
    setDelivers((old) => (old.includes(key) ? old.filter((k) => k !== key) : [...old, key]));
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate();
  }
  return (
    <section className="page" aria-labelledby="provider-form-heading">
      {back}
      <h1 id="provider-form-heading">Provider {original.name}</h1>
      <p className="hint">
        Staging area <span className="mono">{original.staging_area}</span>
      </p>
      <OutcomeNotice
        outcome={
          save.isSuccess
            ? { ok: true, text: `Saved ${original.name}.` }
            : save.isError && Object.keys(errors).length === 0
              ? { ok: false, text: save.error.message }
              : null
        }
      />
      <form className="config-form" onSubmit={onSubmit} noValidate>
        <fieldset className="form-card">
          <legend>Provider</legend>
          <TextField
            id="pf-title"
            label="Title"
            value={title}
            onChange={setTitle}
            error={errors.title}
          />
          <TextField
            id="pf-email"
            label="Contact email"
            value={email}
            onChange={setEmail}
            error={errors.contact_email}
            type="email"
          />
          <Field
            id="pf-members"
            label="Members (user names, comma-separated)"
            error={errors.members}
          >
            <input
              id="pf-members"
              type="text"
              value={members}
              onChange={(e) => setMembers(e.target.value)}
              {...invalid('pf-members', errors.members)}
            />
          </Field>
        </fieldset>
        <fieldset
          className="form-card"
          aria-describedby={errors.collections ? 'pf-coll-error' : undefined}
        >
          <legend>Collections it may deliver</legend>
          {(collections.data ?? []).map((c) => (
            <label key={c.key} className="check">
              <input
                type="checkbox"
                checked={delivers.includes(c.key)}
                onChange={() => toggle(c.key)}
              />
              <span>
                {c.key} <span className="muted">{c.title}</span>
              </span>
            </label>
          ))}
          {errors.collections && (
            <p className="field-error" id="pf-coll-error">
              {errors.collections}
            </p>
          )}
        </fieldset>
        <Field id="pf-reason" label="Reason (kept in the audit log)">
          <input
            id="pf-reason"
            type="text"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        </Field>
        <div className="actions">
          <button className="button" type="submit" disabled={save.isPending}>
            Save provider
          </button>
        </div>
      </form>
    </section>
  );
}
