/** Recent feed entries shared by readers with own cursors; one far behind reads the store and holds none back. */
import { firstIndex } from '../domain/sorted.js';
import type { FeedEntry, FeedPort } from './ports.js';

/** Entries kept for the readers: between RECENT_ENTRIES and twice that many. */
const RECENT_ENTRIES = 4_096;

export class RecentFeed {
  private entries: FeedEntry[] = [];
  constructor(
    private readonly feed: Pick<FeedPort, 'feedAfter'>,
    /** The seq up to which the feed has been read (the poller's cursor): nothing after it is asked of the store. */
    private readonly head: () => number,
    private readonly keep: number = RECENT_ENTRIES,
  ) {}

  push(batch: readonly FeedEntry[]): void {
    for (const e of batch) this.entries.push(e);
    if (this.entries.length > this.keep * 2) this.entries = this.entries.slice(-this.keep);
  }

  /** Forgets every entry (the feed was skipped: what follows is not contiguous with them). */
  clear(): void {
    this.entries = [];
  }

  /** Entries after `seq` (at most `limit`), from memory when `seq` is within the window, else from the feed port. */
  async after(seq: number, limit: number): Promise<FeedEntry[]> {
    const first = this.entries[0];
    if (seq >= this.head()) return [];
    if (first && seq >= first.seq - 1) {
      const from = firstIndex(this.entries, (e) => e.seq > seq);
      return this.entries.slice(from, from + limit);
    }
    return this.feed.feedAfter(seq, limit);
  }
}
