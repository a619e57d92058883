/**
 * The in-memory change feed (src/delivery/memory-feed.ts), the shared recent pages (recent.ts) and the
 * presentation cache (presentation.ts): the feed port's semantics without a store.
 */
import { describe, expect, it } from 'vitest';
import { monotonicFactory } from 'ulid';
import { MemoryFeed, PresentationCache, RecentFeed, type FeedEntry } from '../../src/delivery/index.js';
import type { StoredArticle } from '../../src/domain/articles.js';

const ulid = monotonicFactory();
const article = (content = 'Fed holds rates'): StoredArticle => ({
  id: ulid(),
  content,
  urgency: 'regular',
  sentiment: null,
  published_at: null,
  received_at: new Date().toISOString(),
  source: null,
  url: null,
  tickers: [],
});
const seqs = (entries: FeedEntry[]) => entries.map((e) => e.seq);

describe('MemoryFeed', () => {
  it('gives each appended article the next seq; feedAfter reads oldest first, exclusive, up to the limit', async () => {
    const feed = new MemoryFeed(100);
    expect(await feed.latestSeq()).toBe(0);
    expect(await feed.feedAfter(0, 10)).toEqual([]);
    const appended = Array.from({ length: 5 }, () => feed.append(article()));
    expect(seqs(appended)).toEqual([1, 2, 3, 4, 5]);
    expect(await feed.latestSeq()).toBe(5);
    expect(seqs(await feed.feedAfter(0, 10))).toEqual([1, 2, 3, 4, 5]);
    expect(seqs(await feed.feedAfter(2, 2))).toEqual([3, 4]);
    expect(await feed.feedAfter(5, 10)).toEqual([]);
    expect((await feed.feedAfter(3, 1))[0]!.article).toBe(appended[3]!.article);
  });

  it('keeps the last `limit` entries: a read from before them starts at the oldest kept', async () => {
    const feed = new MemoryFeed(10);
    for (let i = 0; i < 57; i++) feed.append(article());
    expect(await feed.latestSeq()).toBe(57);
    expect(seqs(await feed.feedAfter(0, 100))).toEqual(Array.from({ length: 10 }, (_, i) => 48 + i));
    expect(seqs(await feed.feedAfter(47, 3))).toEqual([48, 49, 50]);
    expect(seqs(await feed.feedAfter(55, 100))).toEqual([56, 57]);
  });

  it('wakes its listeners on every append, until they unsubscribe', () => {
    const feed = new MemoryFeed(10);
    let woken = 0;
    const off = feed.subscribe(() => woken++);
    feed.append(article());
    feed.append(article());
    off();
    feed.append(article());
    expect(woken).toBe(2);
  });

  it('refuses an article whose id does not follow the last one (feed order is id order)', () => {
    const feed = new MemoryFeed(10);
    const a = article();
    feed.append(article());
    expect(() => feed.append(a)).toThrow(/ids must increase/);
    expect(() => new MemoryFeed(0)).toThrow();
  });
});

describe('RecentFeed', () => {
  it('serves readers within its window from memory and those behind it from the feed port', async () => {
    const feed = new MemoryFeed(1000);
    for (let i = 0; i < 50; i++) feed.append(article());
    let storeReads = 0;
    const store = { feedAfter: (seq: number, limit: number) => (storeReads++, feed.feedAfter(seq, limit)) };
    let head = 20;
    const recent = new RecentFeed(store, () => head, 16);
    // The poller read up to 20; the window then holds 21..40 read later (pushed in batches).
    head = 40;
    recent.push(await feed.feedAfter(20, 20));
    expect(seqs(await recent.after(30, 5))).toEqual([31, 32, 33, 34, 35]);
    expect(seqs(await recent.after(20, 3))).toEqual([21, 22, 23]);
    expect(storeReads).toBe(0);
    expect(seqs(await recent.after(5, 3))).toEqual([6, 7, 8]); // behind the window: from the store
    expect(storeReads).toBe(1);
    expect(await recent.after(40, 5)).toEqual([]); // nothing past the head, not even from the store
    expect(storeReads).toBe(1);
  });
});

describe('PresentationCache', () => {
  it('builds a value once per article and variant, however often it is asked for', () => {
    const built: string[] = [];
    const cache = new PresentationCache<string>((a, v) => (built.push(`${a.content}/${v}`), `${a.content}:${v}`));
    const a = article('a');
    const b = article('b');
    for (let i = 0; i < 100; i++)
      for (const x of [a, b]) for (const v of ['pro', 'max']) expect(cache.of(x, v)).toBe(`${x.content}:${v}`);
    expect(built.sort()).toEqual(['a/max', 'a/pro', 'b/max', 'b/pro']);
    expect(cache.built).toBe(4);
  });
});
