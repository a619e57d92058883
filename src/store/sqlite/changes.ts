/**
 * SQLite's change signal. Freshness: this connection's commits are seen at once (`total_changes()`, cheap); other
 * processes' at the next request after a wake-up, or within SQLITE_RECHECK_MS (`PRAGMA data_version` costs more, so not on
 * every request). Follow: a watch on the database's directory sees other processes' WAL writes.
 */
import type Database from 'better-sqlite3';
import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Freshness, FreshnessOptions, FollowHooks, StoreChanges } from '../ports/changes.js';

/** A commit by another process is seen at most this long after it even without a wake-up. */
const SQLITE_RECHECK_MS = 100;

function sqliteFreshness(db: Database.Database, options: FreshnessOptions = {}): Freshness {
  const monotonic = options.monotonic ?? (() => performance.now());
  const ownChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
  // Changes when another connection committed since this connection's previous read of it.
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let own = ownChanges.get()!;
  let external = dataVersion.get()!;
  let checkedAt = monotonic();
  let woken = false;
  let generation = 0;
  const unsubscribe = options.wake?.(() => {
    woken = true;
  });
  return {
    generation() {
      const o = ownChanges.get()!;
      if (o !== own) {
        own = o;
        generation++;
      }
      const t = monotonic();
      if (woken || t - checkedAt >= SQLITE_RECHECK_MS) {
        woken = false;
        checkedAt = t;
        const v = dataVersion.get()!;
        if (v !== external) {
          external = v;
          generation++;
        }
      }
      return generation;
    },
    close() {
      unsubscribe?.();
    },
  };
}

/** Wake-ups on writes to `file`, -wal or -shm (thousands a second in an ingest), at most one per event-loop turn. */
async function followFile(file: string, hooks: FollowHooks): Promise<(() => Promise<void>) | undefined> {
  if (file === ':memory:') {
    hooks.onUnavailable('an in-memory database has no file to watch');
    return undefined;
  }
  const prefix = basename(file);
  let queued = false;
  const wakeOnce = () => {
    queued = false;
    hooks.wake();
  };
  try {
    const watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
      if (queued || typeof name !== 'string' || !name.startsWith(prefix)) return;
      queued = true;
      setImmediate(wakeOnce);
    });
    watcher.on('error', (e) => hooks.onUnavailable(`data directory watch failed (${e.message})`));
    return async () => watcher.close();
  } catch (e) {
    hooks.onUnavailable(`cannot watch the data directory (${(e as Error).message})`);
    return undefined;
  }
}

export function sqliteChanges(db: Database.Database, file: string): StoreChanges {
  return {
    follow: (hooks) => followFile(file, hooks),
    freshness: (options) => sqliteFreshness(db, options),
  };
}
