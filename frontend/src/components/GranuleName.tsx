import { Fragment } from 'react';

/**
 * A granule or file id that may wrap only after its separators (`.`, `_`, `-`), never inside
 * a token: `MOD10C1.A2026316.061` breaks as `MOD10C1.` / `A2026316.061`, not as `MOD10C1.A2026`
 * / `316`. Pair it with the `wrap-tokens` class, which breaks a token only when it alone is
 * wider than its column.
 */
export function GranuleName({ name }: { name: string }) {
  const parts = name.split(/(?<=[._-])/);
  return (
    <>
      {parts.map((part, index) => (
        <Fragment key={index}>
          {index > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </>
  );
}
