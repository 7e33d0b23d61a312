import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';

import { ApiError, fieldErrors } from '../../lib/api/client';
import { updateDestination } from '../../lib/api/destinations/destination';
import { createDestination, destinationsQuery } from '../../lib/api/destinations/destinations';
import { sftpKeyQuery } from '../../lib/api/destinations/sftpKey';
import type { Destination, DestinationBody, DestinationKind } from '../../lib/api/types';
import { Field, invalid } from '../Field';
import './DestinationPicker.css';

interface NewDestination {
  name: string;
  kind: DestinationKind;
  host: string;
  port: string;
  username: string;
  path: string;
  hostKey: string;
}

/** The API's field names that have a field of their own above, which shows their error. */
const FIELDS = new Set(['name', 'host', 'port', 'username', 'path', 'host_key']);

const EMPTY: NewDestination = {
  name: '',
  kind: 'folder',
  host: '',
  port: '22',
  username: '',
  path: '',
  hostKey: '',
};

function formOf(destination: Destination): NewDestination {
  const { name, kind, host, port, username, path, host_key: hostKey } = destination;
  return { name, kind, host, port: String(port), username, path, hostKey };
}

/** The API body; an SFTP destination turned into a folder drops its remote path for the
 * default folder, which the form has no field for. */
function bodyOf(form: NewDestination, editing?: Destination): DestinationBody {
  const name = form.name.trim();
  if (form.kind === 'folder')
    return { name, kind: 'folder', ...(editing?.kind === 'sftp' ? { path: '' } : {}) };
  return {
    name,
    kind: 'sftp',
    host: form.host.trim(),
    ...(form.port.trim() ? { port: Number(form.port) } : {}),
    username: form.username.trim(),
    path: form.path.trim(),
    host_key: form.hostKey.trim(),
  };
}

/** Choose one of the user's destinations, add one, or change the chosen one; the cart's push
 * orders use it too. */
export function DestinationPicker({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (id: string) => void;
  error?: string;
}) {
  const queryClient = useQueryClient();
  const destinations = useQuery(destinationsQuery());
  const [form, setForm] = useState<NewDestination>(EMPTY);
  const [editing, setEditing] = useState<Destination>();
  const chosen = destinations.data?.find((destination) => String(destination.id) === value);
  const set = <K extends keyof NewDestination>(key: K, next: NewDestination[K]) =>
    setForm((old) => ({ ...old, [key]: next }));
  const ids = {
    select: useId(),
    name: useId(),
    kind: useId(),
    host: useId(),
    port: useId(),
    username: useId(),
    path: useId(),
    hostKey: useId(),
  };
  const add = useMutation({
    mutationFn: () =>
      editing
        ? updateDestination(editing.id, bodyOf(form, editing))
        : createDestination(bodyOf(form)),
    onSuccess: async (destination) => {
      await queryClient.invalidateQueries({ queryKey: destinationsQuery().queryKey });
      onChange(String(destination.id));
      setForm(EMPTY);
      setEditing(undefined);
    },
  });
  function edit(destination?: Destination) {
    add.reset();
    setEditing(destination);
    setForm(destination ? formOf(destination) : EMPTY);
  }
  const errors = add.error instanceof ApiError ? fieldErrors(add.error.errors) : {};
  const sftp = form.kind === 'sftp';
  return (
    <div className="destination">
      <Field id={ids.select} label="Destination" error={error}>
        <select
          id={ids.select}
          value={value}
          onChange={(event) => onChange(event.target.value)}
          {...invalid(ids.select, error)}
        >
          <option value="">{destinations.isPending ? 'Loading…' : 'Choose a destination'}</option>
          {destinations.data?.map((destination) => (
            <option key={destination.id} value={destination.id}>
              {destination.name} ({destination.folder})
            </option>
          ))}
        </select>
      </Field>
      {destinations.isError && <p className="field-error">{destinations.error.message}</p>}
      {chosen && chosen.id !== editing?.id && (
        <button
          type="button"
          className="button button--small button--quiet"
          onClick={() => edit(chosen)}
        >
          Change {chosen.name}
        </button>
      )}
      <fieldset className="subfields">
        <legend>{editing ? `Change ${editing.name}` : 'Add a destination'}</legend>
        <Field
          id={ids.name}
          label={editing ? 'Destination name' : 'New destination name'}
          error={errors.name}
        >
          <input
            id={ids.name}
            type="text"
            value={form.name}
            onChange={(event) => set('name', event.target.value)}
            autoComplete="off"
            {...invalid(ids.name, errors.name)}
          />
        </Field>
        <div className="radios" role="radiogroup" aria-label="Kind of destination">
          <label className="check">
            <input
              type="radio"
              name={ids.kind}
              checked={!sftp}
              onChange={() => set('kind', 'folder')}
            />
            Folder in Granary's outbox
          </label>
          <label className="check">
            <input
              type="radio"
              name={ids.kind}
              checked={sftp}
              onChange={() => set('kind', 'sftp')}
            />
            Your SFTP server
          </label>
        </div>
        {sftp && (
          <>
            <div className="field-row">
              <Field id={ids.host} label="Host" error={errors.host}>
                <input
                  id={ids.host}
                  type="text"
                  value={form.host}
                  onChange={(event) => set('host', event.target.value)}
                  placeholder="sftp.example.org"
                  autoComplete="off"
                  {...invalid(ids.host, errors.host)}
                />
              </Field>
              <Field id={ids.port} label="Port" error={errors.port}>
                <input
                  id={ids.port}
                  type="number"
                  min={1}
                  max={65535}
                  value={form.port}
                  onChange={(event) => set('port', event.target.value)}
                  {...invalid(ids.port, errors.port)}
                />
              </Field>
            </div>
            <div className="field-row">
              <Field id={ids.username} label="User" error={errors.username}>
                <input
                  id={ids.username}
                  type="text"
                  value={form.username}
                  onChange={(event) => set('username', event.target.value)}
                  autoComplete="off"
                  {...invalid(ids.username, errors.username)}
                />
              </Field>
              <Field id={ids.path} label="Remote folder" error={errors.path}>
                <input
                  id={ids.path}
                  type="text"
                  value={form.path}
                  onChange={(event) => set('path', event.target.value)}
                  placeholder="incoming/granary"
                  autoComplete="off"
                  {...invalid(ids.path, errors.path)}
                />
              </Field>
            </div>
            <p className="hint">
              The remote folder is absolute, or relative to the user's login directory (blank: that
              directory).
            </p>
            <Field id={ids.hostKey} label="Server host key" error={errors.host_key}>
              <textarea
                id={ids.hostKey}
                rows={2}
                value={form.hostKey}
                onChange={(event) => set('hostKey', event.target.value)}
                spellCheck={false}
                {...invalid(ids.hostKey, errors.host_key)}
              />
            </Field>
            <p className="hint">
              Paste the ssh-ed25519 line that <code>ssh-keyscan -p PORT HOST</code> prints, or the
              server's <code>/etc/ssh/ssh_host_ed25519_key.pub</code>. Granary sends nothing to a
              server that shows another key.
            </p>
            <GranaryKey />
          </>
        )}
        <button
          type="button"
          className="button button--small button--quiet"
          disabled={add.isPending || !form.name.trim()}
          onClick={() => add.mutate()}
        >
          {editing ? 'Save changes' : 'Add destination'}
        </button>
        {editing && (
          <button
            type="button"
            className="button button--small button--quiet"
            onClick={() => edit(undefined)}
          >
            Cancel
          </button>
        )}
        {add.isError && (
          <p className="field-error" role="alert">
            {Object.keys(errors).some((field) => FIELDS.has(field))
              ? `The destination was not ${editing ? 'changed' : 'added'}: see the marked fields.`
              : add.error.message}
          </p>
        )}
      </fieldset>
    </div>
  );
}

/** Granary's public key, to add to authorized_keys on the server, with a copy button. */
function GranaryKey() {
  const key = useQuery(sftpKeyQuery());
  const [copied, setCopied] = useState<string>();
  const headingId = useId();
  async function copy(text: string) {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied.');
    } catch {
      setCopied('Copying failed: select the key and copy it.');
    }
  }
  return (
    <section className="sftp-key" aria-labelledby={headingId}>
      <h3 id={headingId}>Granary's public key</h3>
      <p className="hint">
        Add this line to <code>~/.ssh/authorized_keys</code> of that user on your server. Granary
        logs in with this key; it never asks for a password.
      </p>
      {key.isPending && <p>Loading the key…</p>}
      {key.isError && <p className="field-error">{key.error.message}</p>}
      {key.data && (
        <>
          <pre className="sftp-key__line">
            <code>{key.data.public_key}</code>
          </pre>
          <p className="hint">Fingerprint {key.data.fingerprint}</p>
          <button
            type="button"
            className="button button--small button--quiet"
            onClick={() => void copy(key.data.public_key)}
          >
            Copy the key
          </button>
          {copied && <span role="status"> {copied}</span>}
        </>
      )}
    </section>
  );
}
