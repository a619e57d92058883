/**
 * How the service learns, whatever the engine, that any process committed something.
 * - `follow`: wake-ups on commits (PostgreSQL LISTEN/NOTIFY; SQLite a watch on the WAL's directory).
 * - `freshness`: a generation for the REST caches; an entry made under another generation is not served. SQLite
 *   counts commits exactly; other engines also move it every POLLING_PERIOD_MS, so an unannounced change (a key
 *   deactivated by the CLI) is seen within that period, well inside the one second operators are promised.
 */

export interface Freshness {
  /** Synchronous and cheap; a different number means "anything cached before may be stale". */
  generation(): number;
  close(): void;
}

/** Subscribes to "something was committed" hints; returns the unsubscribe function. */
export type WakeSubscription = (wake: () => void) => () => void;

export interface FreshnessOptions {
  /** Wake-ups on commits (the store's own `follow`, fanned out by src/server). */
  wake?: WakeSubscription;
  /** A monotonic clock in ms (default performance.now): staleness is wall time, not the business clock. */
  monotonic?: () => number;
}

export interface FollowHooks {
  /** Something was committed (coalesced: one call may stand for several commits). */
  wake(): void;
  /** Following again after a lost connection: commits may have been missed meanwhile; re-read the feed. */
  onReconnect(): void;
  /** The connection the notices arrive on failed (it is retried): a dependency error. */
  onError(message: string): void;
  /** Following is not possible (or stopped for good): the callers read on their timer only. */
  onUnavailable(message: string): void;
}

export interface StoreChanges {
  /** Resolves with the stop function, or undefined (`onUnavailable` says why); rejects if connecting fails. */
  follow(hooks: FollowHooks): Promise<(() => Promise<void>) | undefined>;
  /** A new freshness generation over this store (one per cache owner). */
  freshness(options?: FreshnessOptions): Freshness;
}

/** Stores without a change counter: every cached record is re-read at least this often. */
const POLLING_PERIOD_MS = 500;

/** A generation that moves on every wake-up and at least every POLLING_PERIOD_MS. */
export function pollingFreshness(options: FreshnessOptions = {}): Freshness {
  const monotonic = options.monotonic ?? (() => performance.now());
  let generation = 0;
  let epoch = Math.floor(monotonic() / POLLING_PERIOD_MS);
  const unsubscribe = options.wake?.(() => {
    generation++;
  });
  return {
    generation() {
      const e = Math.floor(monotonic() / POLLING_PERIOD_MS);
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
