/** Where a resume starts: feed, id and receive-time order agree (store `insert`), so a binary search finds it. */
import { ulidTimePrefix } from '../store/ports/ids.js';
import type { FeedPort } from './ports.js';

/**
 * The smallest k in [0, upTo] such that every entry with a seq in (k, upTo] has an id above `boundId`:
 * `feedAfter(k, …)` yields exactly the articles after the bound. O(log upTo) one-entry reads.
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

/** The exclusive lower id bound of a replay: the later of `after` and the lookback start (as the list's `since`). */
export function replayLowerBound(after: string, windowStartMs: number): string {
  const windowBound = ulidTimePrefix(Math.max(0, windowStartMs)) + 'ZZZZZZZZZZZZZZZZ';
  return after > windowBound ? after : windowBound;
}
