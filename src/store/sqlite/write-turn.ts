/**
 * The write turn of a connection whose process has a second writer (the ingest thread): SQLite's busy handler
 * sleeps, which on the event loop's connection holds the loop. So each write first awaits `writeTurn`, which
 * resolves once the other writer's writes under way are done (one slice, not the whole ingest). Another
 * process's lock is still waited for by the busy handler, up to the busy timeout.
 */
import type Database from 'better-sqlite3';

const gates = new WeakMap<Database.Database, () => Promise<void> | undefined>();

/** From now on the writes of `db` wait for `gate` (none: they do not wait). */
export function setWriteGate(db: Database.Database, gate: (() => Promise<void> | undefined) | undefined): void {
  if (gate) gates.set(db, gate);
  else gates.delete(db);
}

/** Awaited before a write of `db`: undefined when there is nothing to wait for (none inside a transaction). */
export function writeTurn(db: Database.Database): Promise<void> | undefined {
  if (db.inTransaction) return undefined;
  return gates.get(db)?.();
}
