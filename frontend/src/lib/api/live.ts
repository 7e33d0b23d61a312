/** Live operator figures refresh at most every 10 s. */
export const LIVE_REFRESH_MS = 10_000;
