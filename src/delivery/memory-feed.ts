/**
 * An in-memory change feed (the store's port): the last `limit` entries kept; one behind them resumes at the oldest.
 */
import type { StoredArticle } from '../domain/articles.js';
import type { FeedEntry, FeedPort } from './ports.js';

export class MemoryFeed implements FeedPort {
  private entries: FeedEntry[] = [];
  private seq = 0;
  private readonly listeners = new Set<() => void>();

  /** `limit`: how many entries are kept (at least 1). */
  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`a memory feed keeps at least one entry, got ${limit}`);
  }

  /** Appends the article as the next entry, wakes the listeners. Ids must increase (as the store's). */
  append(article: StoredArticle): FeedEntry {
    const last = this.entries.at(-1);
    if (last && article.id <= last.article.id)
      throw new Error(`feed ids must increase: ${article.id} after ${last.article.id}`);
    const entry: FeedEntry = { seq: ++this.seq, article };
    this.entries.push(entry);
    // Trimmed in steps (amortised): `limit` to twice `limit` entries are kept; only the last `limit` are promised.
    if (this.entries.length >= this.limit * 2) this.entries = this.entries.slice(-this.limit);
    for (const wake of [...this.listeners]) wake();
    return entry;
  }

  /** Entries with a seq above `seq`, oldest first, at most `limit`; below the oldest kept entry, from that one. */
  async feedAfter(seq: number, limit: number): Promise<FeedEntry[]> {
    return this.after(seq, limit);
  }

  async latestSeq(): Promise<number> {
    return this.seq;
  }

  /** Synchronous `feedAfter` (the feed is in memory). */
  after(seq: number, limit: number): FeedEntry[] {
    const first = this.entries[0];
    if (!first || seq >= this.seq) return [];
    // seq numbers are consecutive: the index is arithmetic.
    const from = Math.max(0, seq - first.seq + 1);
    const start = Math.max(from, this.entries.length - this.limit);
    return this.entries.slice(start, start + limit);
  }

  /** `wake` is called after every append; returns the removal (the `feedWake` shape of the feed poller). */
  subscribe(wake: () => void): () => void {
    this.listeners.add(wake);
    return () => this.listeners.delete(wake);
  }
}
