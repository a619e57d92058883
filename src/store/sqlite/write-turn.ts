/**
 * The write turn of a connection whose process has a second writer of its own (the service's ingest
 * thread, ingest-thread.ts): SQLite's busy handler waits for a held write lock by sleeping, and on the
 * event loop's connection that sleep holds the loop (up to the busy timeout, then SQLITE_BUSY). So every
 * write of such a connection first awaits `writeTurn`: it resolves at once while the other writer holds
 * no lock, else once its writes under way are done (between two slices of an ingest: the write waits for
 * the slice under way, not for the whole ingest). Inside a transaction of the connection the write is
 * already under way: no wait. Writes of another process (the CLI) are still waited for by SQLite's busy
 * handler, up to the connection's busy timeout (a few ms for the service).
 */
import type Database from 'better-sqlite3';

const gates = new WeakMap<Database.Database, () => Promise<void> | undefined>();

/** From now on the writes of `db` wait for `gate` (none: they do not wait). */
export function setWriteGate(db: Database.Database, gate: (() => Promise<void> | undefined) | undefined): void {
  if (gate) gates.set(db, gate);
  else gates.delete(db);
}

/** Awaited before a write of `db` (see setWriteGate): undefined when there is nothing to wait for. */
export function writeTurn(db: Database.Database): Promise<void> | undefined {
  if (db.inTransaction) return undefined;
  return gates.get(db)?.();
}
