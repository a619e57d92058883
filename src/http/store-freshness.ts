/**
 * When may what the REST caches hold (key + account records, first pages of GET /v1/news) be stale?
 * A `Freshness` answers with a generation number: it changes whenever the store may have changed, and a
 * cache entry made under another generation is not served.
 *
 * - SQLite: a commit on the service's own connection is seen at once (`total_changes()`, ~0.1 µs); a
 *   commit by another connection or process (the `fns` CLI) is seen at the next request after a wake-up
 *   (the data directory watch of src/server) and at the latest `recheckMs` after it, by reading
 *   `PRAGMA data_version` (a few µs, so not on every request).
 * - Any other store (PostgreSQL): the generation moves on every wake-up (LISTEN/NOTIFY of a new article)
 *   and at least every `periodMs`, so a change nobody announces (a key deactivated, a tier change by the
 *   CLI) is seen within `periodMs`.
 *
 * Both bounds are well inside the "within one second" of operator changes and of article delivery.
 */
import type Database from 'better-sqlite3';

export interface Freshness {
  /** Synchronous and cheap; a different number means "anything cached before may be stale". */
  generation(): number;
  /** Stops listening to wake-ups. */
  close(): void;
}

/** Subscribes to "something was committed" hints; returns the unsubscribe function. */
export type WakeSubscription = (wake: () => void) => () => void;

/** A commit by another process is seen at most this long after it even without a wake-up (SQLite). */
export const SQLITE_RECHECK_MS = 100;
/** Stores without a change counter: every cached record is re-read at least this often. */
export const POLLING_PERIOD_MS = 500;

export interface FreshnessOptions {
  /** Wake-ups on commits (src/server: the data directory watch, PostgreSQL LISTEN/NOTIFY). */
  wake?: WakeSubscription;
  /** A monotonic clock in ms (default performance.now): staleness is wall time, not the business clock. */
  monotonic?: () => number;
}

export function sqliteFreshness(db: Database.Database, options: FreshnessOptions & { recheckMs?: number } = {}): Freshness {
  const monotonic = options.monotonic ?? (() => performance.now());
  const recheckMs = options.recheckMs ?? SQLITE_RECHECK_MS;
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
      if (woken || t - checkedAt >= recheckMs) {
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

export function pollingFreshness(options: FreshnessOptions & { periodMs?: number } = {}): Freshness {
  const monotonic = options.monotonic ?? (() => performance.now());
  const periodMs = options.periodMs ?? POLLING_PERIOD_MS;
  let generation = 0;
  let epoch = Math.floor(monotonic() / periodMs);
  const unsubscribe = options.wake?.(() => {
    generation++;
  });
  return {
    generation() {
      const e = Math.floor(monotonic() / periodMs);
      if (e !== epoch) {
        epoch = e;
        generation++;
      }
      return generation;
    },
    close() {
      unsubscribe?.();
    },
  };
}

/** The freshness of a store: exact counters for the embedded SQLite file, polling for anything else. */
export function freshnessOf(store: object, options: FreshnessOptions = {}): Freshness {
  const db = (store as { engine?: unknown; db?: unknown }).engine === 'sqlite' ? (store as { db?: Database.Database }).db : undefined;
  return db ? sqliteFreshness(db, options) : pollingFreshness(options);
}
