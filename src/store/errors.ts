/**
 * A store operation that failed only because another process holds the lock (SQLite's SQLITE_BUSY /
 * SQLITE_LOCKED and their extended codes): expected, retryable, never a crash or a 500.
 */
export function isStoreBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(code);
}
