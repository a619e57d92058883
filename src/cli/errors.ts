/** Exit codes of `fns`, and one clear line for each expected failure: only an unexpected error prints its stack. */
import { ConfigError } from '../config/index.js';
import { isStoreBusy } from '../store/ports/errors.js';

/** Documented in `fns help` and the README ("Operating it"). */
export const EXIT = {
  ok: 0,
  /** Not done: refused (no such account or key, nothing to cancel) or failed (unreadable file, busy database, ...). */
  failed: 1,
  /** Usage or configuration: unknown command, bad, missing or repeated option, extra argument, invalid environment. */
  usage: 2,
  /** Partial ingest: some articles stored, others not; the report says which. */
  partial: 3,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

export interface ErrorContext {
  dataDir?: string;
  port?: number;
  host?: string;
}

interface SystemError {
  code?: string;
  syscall?: string;
  path?: string;
  port?: number;
  address?: string;
  hostname?: string;
  /** Which listener could not listen, and its settings (server/listeners.ts `fromListener`). */
  listenerSettings?: { listener: string; port: string; host: string };
}

/** The public listener's settings, when an error does not say which listener it came from. */
const PUBLIC = { listener: '', port: 'PORT or --port', host: 'HOST or --host' };

/** The message and exit code of an expected failure; undefined for anything else (a bug: print the stack). */
export function explain(err: unknown, ctx: ErrorContext = {}): { message: string; exitCode: number } | undefined {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  if (err instanceof ConfigError) return { message: err.message, exitCode: EXIT.usage };
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as SystemError & { message?: string };
  const code = e.code ?? '';
  const failed = (message: string) => ({ message, exitCode: EXIT.failed });

  if (code.startsWith('ERR_PARSE_ARGS')) return { message: `${e.message} (see fns help)`, exitCode: EXIT.usage };

  if (isStoreBusy(err)) {
    return failed(
      `the database is busy: another process kept it locked longer than this command waits (SQLite 5 s, PostgreSQL 3 s)${where(ctx)}; try again`,
    );
  }
  if (code.startsWith('SQLITE_CANTOPEN'))
    return failed(`cannot open the database${where(ctx)}: check that DATA_DIR is a directory this user can write`);
  if (code.startsWith('SQLITE_READONLY')) return failed(`the database${where(ctx)} is read-only for this user`);
  if (code.startsWith('SQLITE_FULL') || code === 'ENOSPC') return failed(`the disk is full${where(ctx)}`);

  // Each listener names its own settings: the admin listener's port is ADMIN_PORT, not PORT.
  const l = e.listenerSettings ?? PUBLIC;
  const of = l.listener ? `${l.listener}: ` : '';
  if (e.syscall === 'listen' || e.syscall === 'bind') {
    const port = e.port ?? ctx.port;
    if (code === 'EADDRINUSE') return failed(`${of}port ${port} is in use; set ${l.port}`);
    if (code === 'EACCES')
      return failed(`${of}not allowed to listen on port ${port} (ports below 1024 need privileges); set ${l.port}`);
    if (code === 'EADDRNOTAVAIL')
      return failed(`${of}cannot listen on ${e.address ?? ctx.host}: not an address of this machine; set ${l.host}`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return failed(`${of}unknown host ${e.hostname ?? ctx.host}; set ${l.host}`);

  if (e.path !== undefined) {
    if (code === 'ENOENT') return failed(`${e.path}: no such file or directory`);
    if (code === 'EACCES' || code === 'EPERM') return failed(`${e.path}: permission denied`);
    if (code === 'EISDIR') return failed(`${e.path}: is a directory`);
    if (code === 'ENOTDIR' || (code === 'EEXIST' && e.syscall === 'mkdir'))
      return failed(`${e.path}: not a directory (check DATA_DIR)`);
    if (code === 'EROFS') return failed(`${e.path}: read-only file system`);
  }
  // An input opened fine whose read then failed (an I/O error): the error names no path.
  if (e.syscall === 'read' && code !== '') return failed(`the input could not be read (${e.message ?? code})`);
  return undefined;
}

const where = (ctx: ErrorContext) => (ctx.dataDir ? ` (DATA_DIR ${ctx.dataDir})` : '');
