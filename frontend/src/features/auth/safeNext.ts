/** Only same-site paths are followed after login, so a crafted link cannot send users away. */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/login'))
    return '/';
  return next;
}
