import type { ReactNode } from 'react';

/** aria attributes that tie an input to the error shown under it. */
export function invalid(id: string, error: string | undefined) {
  return error ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

/** A labelled input with the server's sentence about it, if any. */
export function Field({
  id,
  label,
  error,
  children,
}: {
  id: string;
  label: string;
  error?: string;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {error && (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** A labelled one-line input, its value kept by the caller, tied to the error shown under it. */
export function TextField({
  id,
  label,
  value,
  onChange,
  error,
  type = 'text',
  placeholder,
  inputMode,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  type?: 'text' | 'email' | 'url';
  placeholder?: string;
  inputMode?: 'decimal' | 'numeric';
}) {
  return (
    <Field id={id} label={label} error={error}>
      <input
        id={id}
        type={type}
        value={value}
        placeholder={placeholder}
        inputMode={inputMode}
        onChange={(e) => onChange(e.target.value)}
        {...invalid(id, error)}
      />
    </Field>
  );
}
