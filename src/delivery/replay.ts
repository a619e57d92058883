/**
 * Where a resuming connection starts reading the change feed. The store commits articles so that feed
 * order (`seq`), id order and receive-time order agree (src/store/ports/index.ts `insert`), so "every article
 * with an id above a bound" is "every feed entry after some seq". That seq is found by a binary search
 * over the feed (each probe one primary-key read), up to the connection's admission point: no new
 * store method, and the same code on SQLite and PostgreSQL.
 */
import { ulidTimePrefix } from '../store/ports/ids.js';
import type { FeedPort } from './ports.js';

/**
 * The smallest `k` in [0, upTo] such that every feed entry with a seq in (k, upTo] has an id above
 * `boundId` (the seq of the last entry at or below the bound, or 0): reading `feedAfter(k, …)` from
 * there yields exactly the articles after the bound, oldest first. O(log upTo) reads of one entry.
 */
export async function replayStartSeq(
  articles: Pick<FeedPort, 'feedAfter'>,
  boundId: string,
  upTo: number,
): Promise<number> {
  let lo = 0;
  let hi = upTo;
  // Invariant: the answer lies in [lo, hi]; every entry in (hi, upTo] is above the bound.
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const [first] = await articles.feedAfter(mid, 1);
    if (!first || first.seq > upTo || first.article.id > boundId) hi = mid;
    else lo = Math.min(first.seq, hi);
  }
  return lo;
}

/**
 * The exclusive lower bound on article ids that a resuming subscriber replays: the later of `after`
 * and the start of the key's lookback window (`windowStartMs`, from src/domain/lookback.ts). An id
 * sorts by its receive time, so an article received at or before the window start sorts at or below
 * the bound (the same rule as the list endpoint's `since` clamp).
 */
export function replayLowerBound(after: string, windowStartMs: number): string {
  const windowBound = ulidTimePrefix(Math.max(0, windowStartMs)) + 'ZZZZZZZZZZZZZZZZ';
  return after > windowBound ? after : windowBound;
}
