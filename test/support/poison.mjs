// A test seam: makes the ingestion steps throw for one marked text, as a bug would (an unexpected
// TypeError, not a validation error), without relying on any real bug. It wraps
// String.prototype.normalize, which the identity and dedup steps (src/dedup: a headline's normal form,
// its repeat key, its near-duplicate comparison) call on every text, to throw for a string holding
// POISON. On the main thread a test calls `poison()` and `unpoison()`; a worker thread given this module
// as a preload (src/runtime/off-thread.ts `preloadInWorkers`) is poisoned for its whole life.
import { isMainThread } from 'node:worker_threads';

/** The mark: a text holding it cannot be normalised. */
export const POISON = 'Zqxpoisonmark';

const original = String.prototype.normalize;

export function poison() {
  String.prototype.normalize = function normalize(...args) {
    if (String(this).includes(POISON))
      throw new TypeError('poisoned text: this message must not reach an answer or a log');
    return original.apply(this, args);
  };
}

export function unpoison() {
  String.prototype.normalize = original;
}

if (!isMainThread) poison();
