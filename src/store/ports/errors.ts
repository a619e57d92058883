/**
 * A failed call to a dependency (database, shared state) is read by class, not by a list of codes. Each class is
 * expected and retryable: HTTP answers 503 with Retry-After, the stream closes a new connection with 1013, /readyz
 * turns red and the dependency-error metric counts it (src/http/unavailable.ts, src/ops/health.ts).
 * `connection`: unreachable or dropped; `authentication`: credentials refused; `resource`: reachable but out of
 * disk, memory, connections, files, I/O, time or locks. Anything else (syntax, constraint, bug) stays a 500, loudly.
 */
export type FailureClass = 'connection' | 'authentication' | 'resource';

const CODE_CLASSES: ReadonlyArray<readonly [RegExp, FailureClass]> = [
  [
    /^E(CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|PIPE|HOSTUNREACH|HOSTDOWN|NETUNREACH|NETDOWN|NETRESET|NOTFOUND|AI_AGAIN|ADDRNOTAVAIL)$/,
    'connection',
  ],
  [/^E(NOSPC|DQUOT|NOMEM|MFILE|NFILE|IO|ROFS|AGAIN|BUSY)$/, 'resource'],
  // SQLSTATE class 08 connection exception; 57P0x operator intervention (shutdown, cannot connect now, ...).
  [/^08[0-9A-Z]{3}$/, 'connection'],
  [/^57P0[1-5]$/, 'connection'],
  // SQLSTATE class 28 invalid authorization specification.
  [/^28[0-9A-Z]{3}$/, 'authentication'],
  // SQLSTATE class 53 insufficient resources (disk, memory, connections); class 58 system error (58030 I/O).
  [/^5[38][0-9A-Z]{3}$/, 'resource'],
  // SQLSTATE 55P03 lock not available, 57014 query canceled (statement timeout), 40001 / 40P01.
  [/^(55P03|57014|40001|40P01)$/, 'resource'],
  [/^SQLITE_(FULL|NOMEM|IOERR|BUSY|LOCKED|CANTOPEN|READONLY|PROTOCOL)(_[A-Z_]+)?$/, 'resource'],
];

/** 55000 is also a query's state error (a bug, a 500): only the refused login is a connection failure. */
const NOT_ACCEPTING = /is not currently accepting connections/;

/** node-postgres' own errors (no code) when the connection fails or dies under a query. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended unexpectedly)/;

function ownClass(err: object): FailureClass | undefined {
  const code = (err as { code?: unknown }).code;
  const message = (err as { message?: unknown }).message;
  if (typeof code === 'string') {
    for (const [pattern, cls] of CODE_CLASSES) if (pattern.test(code)) return cls;
    if (code === '55000' && typeof message === 'string' && NOT_ACCEPTING.test(message)) return 'connection';
  }
  if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return 'connection';
  return undefined;
}

/**
 * Undefined: no dependency failure. A wrapper (`storeUnavailable` / `unavailable`) takes its cause's class,
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
    const marked = e as { storeUnavailable?: unknown; unavailable?: unknown; cause?: unknown };
    if (marked.storeUnavailable === true || marked.unavailable === true) {
      const inner = marked.cause;
      return (inner !== null && typeof inner === 'object' ? failureClass(inner) : undefined) ?? 'connection';
    }
  }
  return undefined;
}

/** Failed only because another process holds the lock: expected and retryable, never a crash or a 500. */
export function isStoreBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (/^SQLITE_(BUSY|LOCKED)(_|$)/.test(code) || code === '55P03');
}

/** A write refused for another process's lock wrote nothing: tried again, without blocking the event loop. */
const BUSY_RETRY_MS = 5;
export const BUSY_PATIENCE_MS = 2000;

/** `write` again while another process holds the lock, every BUSY_RETRY_MS for up to BUSY_PATIENCE_MS. */
export async function patiently<T>(write: () => Promise<T>): Promise<T> {
  const until = performance.now() + BUSY_PATIENCE_MS;
  for (;;) {
    try {
      return await write();
    } catch (e) {
      if (!isStoreBusy(e) || performance.now() >= until) throw e;
      await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
    }
  }
}

/** Cannot serve now (any class but isStoreBusy): HTTP answers 503; the PostgreSQL adapter drops that connection. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly storeUnavailable = true;
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

/** An error's `name` if a plain identifier (max 64 chars), else `Error`; never its message (may quote outside text). */
export function errorClass(err: unknown): string {
  let name: unknown;
  try {
    name = err !== null && typeof err === 'object' ? (err as { name?: unknown }).name : undefined;
  } catch {
    name = undefined;
  }
  return typeof name === 'string' && /^[A-Za-z_$][\w$]{0,63}$/.test(name) ? name : 'Error';
}

/** At most 12 stack frames of an error, without its message: what a log may carry about it. */
export function stackFrames(err: unknown): string[] {
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
    .slice(0, 12)
    .map((l) => l.trim().slice(0, 300));
}
