/**
 * The change signal of a store: how the service learns that something was committed (by itself or by
 * another process: the `fns` CLI, another instance) without knowing the engine.
 *
 * - `follow`: wake-ups on commits (PostgreSQL LISTEN/NOTIFY; SQLite a watch on the database's
 *   directory, where another process's commit lands in the WAL file). The feed readers (stream,
 *   webhooks) and the REST caches subscribe to them.
 * - `freshness`: a generation number for the REST caches (keys and account records, first pages of
 *   GET /v1/news): it changes whenever the store may have changed, and a cache entry made under another
 *   generation is not served. SQLite counts commits exactly (src/store/sqlite/changes.ts); any other
 *   engine moves the generation on every wake-up and at least every `POLLING_PERIOD_MS`
 *   (`pollingFreshness`), so a change nobody announces (a key deactivated, a tier change by the CLI) is
 *   seen within that period.
 *
 * Both bounds are well inside the "within one second" of operator changes and of article delivery.
 */

export interface Freshness {
  /** Synchronous and cheap; a different number means "anything cached before may be stale". */
  generation(): number;
  /** Stops listening to wake-ups. */
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

/** What `follow` tells its caller. */
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
  /**
   * Starts following commits by any process; resolves with the function that stops it, or undefined
   * when this store cannot follow (then `hooks.onUnavailable` said why). Rejects when the first
   * connection fails.
   */
  follow(hooks: FollowHooks): Promise<(() => Promise<void>) | undefined>;
  /** A new freshness generation over this store (one per cache owner). */
  freshness(options?: FreshnessOptions): Freshness;
}

/** Stores without a change counter: every cached record is re-read at least this often. */
const POLLING_PERIOD_MS = 500;

/** A generation that moves on every wake-up and at least every `periodMs`. */
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
