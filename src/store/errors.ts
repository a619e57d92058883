/**
 * A store operation that failed only because another process holds the lock (SQLite's SQLITE_BUSY /
 * SQLITE_LOCKED and their extended codes): expected, retryable, never a crash or a 500.
 */
export function isStoreBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // PostgreSQL: 55P03 lock_not_available (lock_timeout, e.g. waiting for another process's article insert).
  return typeof code === 'string' && (/^SQLITE_(BUSY|LOCKED)(_|$)/.test(code) || code === '55P03');
}

/**
 * The database cannot be reached (refused, dropped, timed out, shutting down): the PostgreSQL adapter
 * throws StoreUnavailableError for these. Expected while the database is down, retryable; the HTTP
 * layer answers 503 with Retry-After, never 500.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly storeUnavailable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Network error codes and PostgreSQL SQLSTATEs that mean "the database is not reachable now". */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended unexpectedly)/;

export function isStoreUnavailable(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  if ((err as { storeUnavailable?: unknown }).storeUnavailable === true) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_CODES.has(code)) return true;
    // 08xxx connection exception; 57014 query_canceled (statement_timeout); 57P01-57P03 shutdown /
    // cannot connect now; 53300 too many connections.
    if (/^08[0-9A-Z]{3}$/.test(code) || /^57(014|P0[1-3])$/.test(code) || code === '53300') return true;
  }
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}

/** `addSource` with a name already registered (the CLI says so and exits with its usage code). */
export class SourceExistsError extends Error {
  override readonly name = 'SourceExistsError';
  constructor(readonly sourceName: string) {
    super(`a source named "${sourceName}" already exists`);
  }
}
