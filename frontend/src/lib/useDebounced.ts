import { useEffect, useState } from 'react';

/** `value` once it has stayed the same (by its JSON) for `ms`: typing does not flood the API. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  const key = JSON.stringify(value);
  useEffect(() => {
    // The same value keeps its identity: a render for nothing would ask its queries again.
    const timer = setTimeout(
      () => setSettled((old) => (JSON.stringify(old) === key ? old : (JSON.parse(key) as T))),
      ms,
    );
    return () => clearTimeout(timer);
  }, [key, ms]);
  return settled;
}
