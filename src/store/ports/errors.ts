/**
 * How a failed call to a dependency (the database, the shared state) is read: by CLASS, not by a list
 * of codes that grows one incident at a time. Three classes, each "expected while the dependency is in
 * trouble, retryable": the HTTP layer answers `503` with `Retry-After`, the stream closes a new
 * connection with `1013`, `/readyz` turns red while it lasts and the dependency-error metric counts it
 * (src/http/unavailable.ts, src/ops/health.ts).
 *
 * - `connection`: the dependency cannot be reached or dropped the connection (Node's network errnos,
 *   SQLSTATE class 08 connection exception, 57P01–57P05 operator intervention: shutdown, cannot connect
 *   now, database dropped, idle session timeout; the driver's own "connection terminated" errors).
 * - `authentication`: the dependency refuses our credentials (SQLSTATE class 28 invalid authorization:
 *   28000 e.g. a role set to NOLOGIN, 28P01 a changed password).
 * - `resource`: the dependency is reachable but out of something: disk (SQLITE_FULL, ENOSPC, EDQUOT,
 *   SQLSTATE 53100), memory (SQLITE_NOMEM, ENOMEM, 53200), connections or files (53300, EMFILE,
 *   ENFILE), all of SQLSTATE class 53 insufficient resources and 58 system error (58030 I/O error),
 *   I/O (SQLITE_IOERR_*, EIO, a read-only file system), or time and locks (SQLITE_BUSY / SQLITE_LOCKED
 *   and their extended codes, 55P03 lock not available, 57014 statement timeout, 40001 / 40P01
 *   serialization failure and deadlock).
 *
 * Anything else (a syntax error, a constraint, a bug) has no class: it stays a 500, loudly.
 */
export type FailureClass = 'connection' | 'authentication' | 'resource';

/** One rule of the table: a code pattern (errno, SQLSTATE or SQLite code) and the class it means. */
const CODE_CLASSES: ReadonlyArray<readonly [RegExp, FailureClass]> = [
  // Node / libuv network errnos.
  [
    /^E(CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|PIPE|HOSTUNREACH|HOSTDOWN|NETUNREACH|NETDOWN|NETRESET|NOTFOUND|AI_AGAIN|ADDRNOTAVAIL)$/,
    'connection',
  ],
  // Node / libuv resource errnos: disk, quota, memory, descriptors, I/O, read-only file system.
  [/^E(NOSPC|DQUOT|NOMEM|MFILE|NFILE|IO|ROFS|AGAIN|BUSY)$/, 'resource'],
  // SQLSTATE class 08 connection exception; 57P0x operator intervention (shutdown, cannot connect now, ...).
  [/^08[0-9A-Z]{3}$/, 'connection'],
  [/^57P0[1-5]$/, 'connection'],
  // SQLSTATE class 28 invalid authorization specification.
  [/^28[0-9A-Z]{3}$/, 'authentication'],
  // SQLSTATE class 53 insufficient resources (53000, 53100 disk full, 53200 out of memory, 53300 too
  // many connections, 53400 configuration limit); class 58 system error (58000, 58030 I/O error).
  [/^5[38][0-9A-Z]{3}$/, 'resource'],
  // SQLSTATE 55P03 lock not available, 57014 query canceled (statement timeout), 40001 / 40P01.
  [/^(55P03|57014|40001|40P01)$/, 'resource'],
  // SQLite: disk full, out of memory, I/O errors, busy / locked (timeouts), cannot open, read-only, protocol.
  [/^SQLITE_(FULL|NOMEM|IOERR|BUSY|LOCKED|CANTOPEN|READONLY|PROTOCOL)(_[A-Z_]+)?$/, 'resource'],
];

/** node-postgres' own errors (no code) when the connection fails or dies under a query. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended unexpectedly)/;

/** The class of a failure's own code or message, without looking at its cause. */
function ownClass(err: object): FailureClass | undefined {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    for (const [pattern, cls] of CODE_CLASSES) if (pattern.test(code)) return cls;
  }
  const message = (err as { message?: unknown }).message;
  if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return 'connection';
  return undefined;
}

/**
 * The class of a store failure, or undefined when it is not a dependency failure. A wrapper
 * (StoreUnavailableError, an error marked `storeUnavailable` / `unavailable`) takes its cause's class,
 * `connection` when the cause has none.
 */
export function failureClass(err: unknown): FailureClass | undefined {
  for (
    let e = err, depth = 0;
    e !== null && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const own = ownClass(e);
    if (own) return own;
    const marked =
      (e as { storeUnavailable?: unknown; unavailable?: unknown }).storeUnavailable === true ||
      (e as { unavailable?: unknown }).unavailable === true;
    if (marked) {
      const inner = (e as { cause?: unknown }).cause;
      return (inner !== null && typeof inner === 'object' ? failureClass(inner) : undefined) ?? 'connection';
    }
  }
  return undefined;
}

/**
 * A store operation that failed only because another process holds the lock (SQLite's SQLITE_BUSY /
 * SQLITE_LOCKED and their extended codes; PostgreSQL's 55P03 lock_not_available, e.g. lock_timeout
 * while another process inserts articles): expected, retryable, never a crash or a 500. The CLI and the
 * search index retry these themselves.
 */
export function isStoreBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (/^SQLITE_(BUSY|LOCKED)(_|$)/.test(code) || code === '55P03');
}

/**
 * The database cannot serve now (any class above except a lock held by another process, see
 * isStoreBusy): the PostgreSQL adapter throws StoreUnavailableError for these and never hands the
 * connection that met one back to its pool. The HTTP layer answers 503 with Retry-After, never 500.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly storeUnavailable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function isStoreUnavailable(err: unknown): boolean {
  return failureClass(err) !== undefined && !isStoreBusy(err);
}

/** `add` with a name already registered (the CLI says so and exits with its usage code). */
export class SourceExistsError extends Error {
  override readonly name = 'SourceExistsError';
  constructor(readonly sourceName: string) {
    super(`a source named "${sourceName}" already exists`);
  }
}

/**
 * The class of an unexpected error, as it may be logged and answered: its `name` when that is a plain
 * identifier of at most 64 characters (`TypeError`, `RangeError`, `SqliteError`…), else `Error`. Never
 * its message, which may quote the outside text that caused it.
 */
export function errorClass(err: unknown): string {
  let name: unknown;
  try {
    name = err !== null && typeof err === 'object' ? (err as { name?: unknown }).name : undefined;
  } catch {
    name = undefined;
  }
  return typeof name === 'string' && /^[A-Za-z_$][\w$]{0,63}$/.test(name) ? name : 'Error';
}

/**
 * The stack frames of an unexpected error without its message (the lines naming the code that threw,
 * at most `max`): what a log may carry about it.
 */
export function stackFrames(err: unknown, max = 12): string[] {
  let stack: unknown;
  let head = '';
  try {
    stack = err instanceof Error ? err.stack : undefined;
    head = String(err);
  } catch {
    stack = undefined;
  }
  if (typeof stack !== 'string') return [];
  // V8's stack starts with `${name}: ${message}` (lines of its own when the message has line breaks).
  return (stack.startsWith(head) ? stack.slice(head.length) : '')
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .slice(0, max)
    .map((l) => l.trim().slice(0, 300));
}
