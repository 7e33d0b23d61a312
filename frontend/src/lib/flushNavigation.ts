import { flushSync } from 'react-dom';

/**
 * The router's `flushSync`: a navigation asked to be synchronous (a logout's) is committed,
 * its old page unmounted, before its caller goes on.
 */
export function flushNavigation(fn: () => unknown): undefined {
  flushSync(fn);
  return undefined;
}
