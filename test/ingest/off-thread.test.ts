/**
 * Issue 19, item 1, second round: the ingestion work of a large input runs on worker threads, with the
 * same results as on the event loop's thread. The SQLite side of `ingestItems` (look-ups, dedup plan,
 * inserts, commit) on the ingest thread (src/store/sqlite/ingest-thread.ts); a large feed parsed, mapped
 * and enriched on one (src/sources/off-thread.ts); a large push body read and checked on one
 * (src/ops/push.ts readPushBodyOffThread). Both hand their results on chunk by chunk, the next one only
 * once the caller took the one before (a poll or a push stores each chunk first), so a large input is
 * never all on the event loop's heap at once. Machine independent: turns of the event loop and chunks
 * are counted, never durations.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PUSH_CHUNK,
  PUSH_OFF_THREAD_MIN_BYTES,
  PushBodyError,
  pushArticles,
  readPushBody,
  readPushBodyOffThread,
  stopPushReader,
  type PushLine,
} from '../../src/ops/push.js';
import { FeedError, parseFeed, toSourcedItems } from '../../src/sources/index.js';
import {
  OFF_THREAD_MIN_BYTES,
  PREPARED_CHUNK,
  prepareFeedItems,
  stopFeedPreparer,
} from '../../src/sources/off-thread.js';
import type { ItemOutcome, SourcedItem } from '../../src/store/ports/index.js';
import { INGEST_THREAD_BUSY_TIMEOUT_MS } from '../../src/store/sqlite/ingest-thread.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { sourcedArticle } from '../../src/sources/pipeline.js';
import { rssOf, title, turnsDuring, words } from './support.js';
import { until } from '../support/wait.js';

const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterAll(async () => {
  await stopFeedPreparer();
  await stopPushReader();
  for (const s of stores) await s.close().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fileStore = (offThread: boolean, maxItems = 20) => {
  const d = mkdtempSync(join(tmpdir(), 'fns-off-'));
  dirs.push(d);
  const file = join(d, 'fns.sqlite');
  const s = new SqliteStore(file, { busyTimeoutMs: 5, ingestOffThread: offThread, ingestSlices: { maxItems } });
  stores.push(s);
  return { store: s, file };
};

const article = (content: string, url: string | null = null) => ({
  content,
  urgency: 'regular' as const,
  sentiment: null,
  published_at: null,
  tickers: [],
  url,
});

/**
 * Batches that exercise every rule: new items, the same item again (same-item), another source's copy
 * by link (same-url), by headline (near-duplicate, across batches and within one), a repeat within a
 * batch, and plain new stories.
 */
function batches(): SourcedItem[][] {
  const stories = [
    'Acme Corp shares jump 12% after record quarterly profit beats forecasts',
    'Globex to cut 3,000 jobs as demand for its chips slumps in Asia',
    'Initech agrees to buy Hooli for $4.2 billion in cash and stock',
    'Central bank holds rates steady, signals cuts later this year',
  ];
  const a = stories.map((s, i) => sourcedArticle('wire-a', `a-${i}`, article(s, `https://a.example/${i}`)));
  const b = [
    sourcedArticle(
      'wire-b',
      'b-0',
      article('Acme Corp shares jump 12 percent after record quarterly profit beats forecasts'),
    ),
    sourcedArticle(
      'wire-b',
      'b-1',
      article('Different words entirely about a harbor strike', 'https://a.example/1?utm_source=x'),
    ),
    sourcedArticle('wire-b', 'b-2', article('Initech agrees to buy Hooli for $4.2bn in cash and stock')),
    sourcedArticle('wire-b', 'b-3', article('A brand new story about cocoa prices in Ghana')),
    sourcedArticle('wire-c', 'c-3', article('A brand new story about cocoa prices in Ghana, as wheat climbs')),
    sourcedArticle('wire-b', 'b-3', article('A brand new story about cocoa prices in Ghana')),
  ];
  const many = Array.from({ length: 120 }, (_, i) =>
    sourcedArticle('wire-d', `d-${i}`, article(`${title(i)} as ${words[(i * 7) % 14]} climbs`)),
  );
  return [a, b, a.slice(0, 2), many, many.slice(50, 70)];
}

/**
 * Outcomes without the random ids: a stored item's number, a duplicate's reason and the number of the item it resolved
 * to.
 */
function shape(all: ItemOutcome[][]): string[][] {
  const n = new Map<string, number>();
  return all.map((outcomes) =>
    outcomes.map((o) => {
      if (o.status === 'stored') {
        n.set(o.id, n.size);
        return `stored #${n.get(o.id)}`;
      }
      if (o.status === 'failed') return `failed ${o.errClass}`;
      return `duplicate ${o.reason} of #${n.get(o.id)}`;
    }),
  );
}

describe('the ingest thread: same outcomes as ingesting on the event loop, without holding it', () => {
  it('every rule (same-item, same-url, near-duplicate, within a batch) answers as the inline store does', async () => {
    const inline = fileStore(false).store;
    const thread = fileStore(true).store;
    const a: ItemOutcome[][] = [];
    const b: ItemOutcome[][] = [];
    let t = 1_800_000_000_000;
    for (const batch of batches()) {
      a.push(await inline.sources.ingestItems(batch, t));
      b.push(await thread.sources.ingestItems(batch, t));
      t += 1000;
    }
    expect(shape(b)).toEqual(shape(a));
    expect(shape(a).flat()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^duplicate same-item/),
        expect.stringMatching(/^duplicate same-url/),
        expect.stringMatching(/^duplicate near-duplicate/),
      ]),
    );
    expect(await thread.articles.count()).toBe(await inline.articles.count());
    // What the thread stored is what this thread's connection reads.
    const stored = b.flat().find((o) => o.status === 'stored')!;
    expect((await thread.sources.carriersOf(stored.id)).length).toBeGreaterThan(0);
  });

  it('300 items in slices of 20: the event loop gets a turn between slices; the clock is read per slice', async () => {
    const { store } = fileStore(true, 20);
    const items = toSourcedItems(
      { name: 'wire', urgency: 'auto' },
      parseFeed(new TextEncoder().encode(rssOf(300)), { baseUrl: 'https://ex.com/' }).items,
    );
    let reads = 0;
    const clock = () => (reads++, 1_800_000_000_000);
    const { result, turns } = await turnsDuring(() => store.sources.ingestItems(items, clock));
    expect(turns).toBeGreaterThanOrEqual(14);
    expect(reads).toBeGreaterThanOrEqual(15);
    expect(
      result.every((o) => o.status === 'stored' && o.received_at === new Date(1_800_000_000_000).toISOString()),
    ).toBe(true);
    expect(await store.articles.count()).toBe(300);
  });

  it(
    "waits for a write lock another connection holds for a moment (a slice, a poll's record), and fails with SQLITE_BUSY past INGEST_THREAD_BUSY_TIMEOUT_MS",
    async () => {
      const { store, file } = fileStore(true);
      await store.sources.ingestItems(
        [sourcedArticle('w', 'warm', article('warm up the ingest thread'))],
        1_800_000_000_000,
      );
      const other = new Database(file);
      try {
        other.exec('BEGIN IMMEDIATE');
        setTimeout(() => other.exec('COMMIT'), 100);
        const [brief] = await store.sources.ingestItems(
          [sourcedArticle('w', 'one', article('a story stored once the lock is free'))],
          1_800_000_000_000,
        );
        expect(brief).toMatchObject({ status: 'stored' });
        // The record of a poll (right after its ingest) waits for the lock the same way: its counters are kept.
        await store.sources.add(
          { name: 'w', url: 'https://ex.com/feed', everyMs: 60_000, urgency: 'auto' },
          1_800_000_000_000,
        );
        other.exec('BEGIN IMMEDIATE');
        setTimeout(() => other.exec('COMMIT'), 100);
        await store.sources.recordPoll('w', 'me', {
          at: 1_800_000_000_000,
          status: 200,
          error: null,
          etag: null,
          lastModified: null,
          nextPollAt: 1_800_000_060_000,
          failures: 0,
          minIntervalMs: null,
          seen: 2,
          ingested: 1,
          deduplicated: 1,
        });
        const polledAt = new Date(1_800_000_000_000).toISOString();
        expect(await store.sources.get('w')).toMatchObject({
          itemsSeen: 2,
          itemsIngested: 1,
          itemsDeduplicated: 1,
          lastOkAt: polledAt,
          failingSince: null,
          lastArticleAt: polledAt,
        });
        other.exec('BEGIN IMMEDIATE');
        const held = store.sources.ingestItems(
          [sourcedArticle('w', 'two', article('a story that finds the lock held too long'))],
          1_800_000_000_000,
        );
        await expect(held).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
        other.exec('ROLLBACK');
      } finally {
        if (other.inTransaction) other.exec('ROLLBACK');
        other.close();
      }
    },
    INGEST_THREAD_BUSY_TIMEOUT_MS + 10_000,
  );

  it("a write of the event loop's connection while the thread writes waits for the slice under way, not in SQLite's busy handler (no SQLITE_BUSY) and not for the whole ingest", async () => {
    // Busy timeout 0 on the event loop's connection: a write that met the thread's lock would fail at once.
    const d = mkdtempSync(join(tmpdir(), 'fns-off-'));
    dirs.push(d);
    const store = new SqliteStore(join(d, 'fns.sqlite'), {
      busyTimeoutMs: 0,
      ingestOffThread: true,
      ingestSlices: { maxItems: 20 },
    });
    stores.push(store);
    await store.sources.ingestItems(
      [sourcedArticle('w', 'warm', article('warm up the ingest thread'))],
      1_800_000_000_000,
    );
    const items = (n: number, src: string) =>
      toSourcedItems(
        { name: src, urgency: 'auto' },
        parseFeed(new TextEncoder().encode(rssOf(n)), { baseUrl: `https://${src}.example/` }).items,
      );
    // Each slice is sent right after the clock is read: a write of this connection is started then.
    const writes: Promise<unknown>[] = [];
    let n = 0;
    const clock = () => {
      const name = `s-${n++}`;
      setImmediate(() =>
        writes.push(
          store.sources.add(
            { name, url: `https://ex.com/${name}`, everyMs: 60_000, urgency: 'auto' },
            1_800_000_000_000,
          ),
        ),
      );
      return 1_800_000_000_000;
    };
    let ingestsDone = false;
    // Two ingests at once: the thread always has a slice under way or about to be sent.
    const ingests = Promise.all([
      store.sources.ingestItems(items(300, 'a'), clock),
      store.sources.ingestItems(items(300, 'b'), clock),
    ]).then(() => (ingestsDone = true));
    await until(() => writes.length >= 10, 'writes started during the ingests');
    const firstTen = Promise.all(writes.slice(0, 10)).then(() => ingestsDone);
    expect(await firstTen).toBe(false); // they had their turn between slices
    await ingests;
    const settled = await Promise.allSettled(writes);
    expect(
      settled.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
    ).toEqual([]);
    expect((await store.sources.list()).length).toBe(writes.length);
  });

  it("the embedding worker's vectors are written there too: a write lock held for a moment is waited for there, not failed with SQLITE_BUSY on the event loop", async () => {
    const { store, file } = fileStore(true);
    const [o] = await store.sources.ingestItems(
      [sourcedArticle('w', 'v', article('a story to embed'))],
      1_800_000_000_000,
    );
    const id = (o as { id: string }).id;
    const other = new Database(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      // Released by this thread's event loop: the write must not hold it meanwhile.
      setTimeout(() => other.exec('COMMIT'), 100);
      await store.vectors.storeVectors('test-model', [{ id, vector: new Float32Array([1, 0, 0]) }]);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    expect((await store.vectors.vectorsAfter('test-model', 0)).map((v) => v.id)).toEqual([id]);
  });
});

describe('the ingest thread inside a transaction of the store', () => {
  it('an ingest inside store.transaction joins it on this thread (the thread would wait for the lock it holds)', async () => {
    const { store } = fileStore(true);
    const outcomes = await store.transaction(async (tx) =>
      tx.sources.ingestItems(
        [sourcedArticle('w', 'tx-1', article('a story stored inside a transaction'))],
        1_800_000_000_000,
      ),
    );
    expect(outcomes).toMatchObject([{ status: 'stored' }]);
    expect(await store.articles.count()).toBe(1);
  });
});

describe('a large feed is parsed, mapped and enriched on a worker thread', () => {
  it('over OFF_THREAD_MIN_BYTES: a timer set before fires before the result; the items of parseFeed + toSourcedItems', async () => {
    // Item 7 has no text (left out, but counted in itemCount).
    const body = new TextEncoder().encode(
      rssOf(600, 200)
        .replace(`<title>${title(7)}</title>`, '<title></title>')
        .replace(/(<guid>g-7<\/guid>)<description>x+<\/description>/, '$1'),
    );
    expect(body.length).toBeGreaterThan(OFF_THREAD_MIN_BYTES);
    const source = { name: 'wire', urgency: 'auto' as const };
    let fired = false;
    setTimeout(() => (fired = true), 0);
    const items: SourcedItem[] = [];
    const feed = await prepareFeedItems(
      body,
      { baseUrl: 'https://ex.com/' },
      source,
      (chunk) => void items.push(...chunk),
    );
    expect(fired).toBe(true);
    const parsed = parseFeed(body, { baseUrl: 'https://ex.com/' });
    expect(items).toEqual(toSourcedItems(source, parsed.items));
    expect(items).toHaveLength(parsed.items.length - 1);
    expect(feed).toEqual({
      format: parsed.format,
      title: parsed.title,
      minIntervalSeconds: parsed.minIntervalSeconds,
      itemCount: parsed.items.length,
    });
  });

  it('a large body that is no feed: the FeedError parseFeed throws, kind and message', async () => {
    const body = new TextEncoder().encode(`<html><body>${'<p>not a feed</p>'.repeat(5000)}</body></html>`);
    expect(body.length).toBeGreaterThan(OFF_THREAD_MIN_BYTES);
    let expected: unknown;
    try {
      parseFeed(body, { baseUrl: 'https://ex.com/' });
    } catch (e) {
      expected = e;
    }
    expect(expected).toBeInstanceOf(FeedError);
    let chunks = 0;
    const err = await prepareFeedItems(
      body,
      { baseUrl: 'https://ex.com/' },
      { name: 'w', urgency: 'auto' },
      () => void chunks++,
    ).catch((e: unknown) => e);
    expect(chunks).toBe(0);
    expect(err).toBeInstanceOf(FeedError);
    expect(err).toMatchObject({ kind: (expected as FeedError).kind, message: (expected as FeedError).message });
  });
});

describe('a large push body is read and checked on a worker thread', () => {
  const line = (i: number) =>
    JSON.stringify({ source: 'desk', id: `d-${i}`, content: `${title(i)} ${'and more words '.repeat(12)}` });

  it('the lines of readPushBody, in order: good lines, bad JSON, a line that is not UTF-8', async () => {
    const parts = Array.from({ length: 400 }, (_, i) => Buffer.from(i === 7 ? '{"source": "desk", "id": ' : line(i)));
    parts[9] = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const body = Buffer.concat(parts.flatMap((p) => [p, Buffer.from('\n')]));
    expect(body.length).toBeGreaterThan(PUSH_OFF_THREAD_MIN_BYTES);
    let fired = false;
    setTimeout(() => (fired = true), 0);
    const lines: PushLine[] = [];
    await readPushBodyOffThread(body, 'ndjson', (chunk) => void lines.push(...chunk));
    expect(fired).toBe(true);
    expect(lines).toEqual(await readPushBody(body, 'ndjson'));
    expect(lines.filter((l) => 'error' in l).map((l) => l.line)).toEqual([8, 10]);
  });

  it('a large body with no JSON line: the PushBodyError readPushBody throws', async () => {
    const body = Buffer.from(Array.from({ length: 3000 }, (_, i) => `not json at all, line ${i}`).join('\n'));
    expect(body.length).toBeGreaterThan(PUSH_OFF_THREAD_MIN_BYTES);
    const expected = await readPushBody(body, 'ndjson').catch((e: unknown) => e);
    expect(expected).toBeInstanceOf(PushBodyError);
    let chunks = 0;
    const err = await readPushBodyOffThread(body, 'ndjson', () => void chunks++).catch((e: unknown) => e);
    expect(chunks).toBe(0);
    expect(err).toBeInstanceOf(PushBodyError);
    expect((err as Error).message).toBe((expected as Error).message);
  });
});

describe('a large input comes back chunk by chunk, the next once the one before was taken', () => {
  const feedBody = () => new TextEncoder().encode(rssOf(1000, 200));
  const source = { name: 'wire', urgency: 'auto' as const };
  const pushBody = () =>
    Buffer.from(
      Array.from({ length: 1000 }, (_, i) =>
        JSON.stringify({ source: 'desk', id: `c-${i}`, content: `${title(i)} ${'and more words '.repeat(6)}` }),
      ).join('\n'),
    );

  /** A taker that holds each chunk until released, counting the chunks it has been given. */
  const heldTaker = <T>() => {
    const got: T[][] = [];
    let release: () => void = () => {};
    let arrived: () => void = () => {};
    const take = (chunk: T[]) => {
      got.push(chunk);
      arrived();
      return new Promise<void>((r) => (release = r));
    };
    const nextArrival = () => new Promise<void>((r) => (arrived = r));
    return { got, take, release: () => release(), nextArrival };
  };

  // A call that fails at once on the same worker: its answer comes after every chunk the worker sent before it.
  const notAFeed = () => new TextEncoder().encode(`<html><body>${'<p>not a feed</p>'.repeat(5000)}</body></html>`);
  const notJson = () => Buffer.from(Array.from({ length: 3000 }, (_, i) => `not json at all, line ${i}`).join('\n'));
  for (const [name, run, barrier, size, total] of [
    [
      'a feed of 1,000 items',
      (take: (c: unknown[]) => Promise<void>) =>
        prepareFeedItems(feedBody(), { baseUrl: 'https://ex.com/' }, source, take as never),
      () => prepareFeedItems(notAFeed(), { baseUrl: 'https://ex.com/' }, source, () => {}).catch(() => {}),
      PREPARED_CHUNK,
      1000,
    ],
    [
      'a push of 1,000 lines',
      (take: (c: unknown[]) => Promise<void>) => readPushBodyOffThread(pushBody(), 'ndjson', take as never),
      () => readPushBodyOffThread(notJson(), 'ndjson', () => {}).catch(() => {}),
      PUSH_CHUNK,
      1000,
    ],
  ] as const) {
    it(`${name}: while a chunk is held no other arrives; every item once, in order`, async () => {
      const t = heldTaker<unknown>();
      let arrival = t.nextArrival();
      const call = run(t.take);
      for (let n = 1; n <= total / size; n++) {
        await arrival;
        await barrier();
        expect(t.got).toHaveLength(n);
        arrival = t.nextArrival();
        t.release();
      }
      await call;
      expect(t.got.flat()).toHaveLength(total);
      expect(t.got.every((c) => c.length <= size)).toBe(true);
    });

    it(`${name}: a taker that throws ends the call with its error, no chunk comes after it, and the thread answers the next call`, async () => {
      let chunks = 0;
      const boom = new Error('the store failed');
      const err = await run(async () => {
        chunks++;
        throw boom;
      }).catch((e: unknown) => e);
      expect(err).toBe(boom);
      await barrier();
      expect(chunks).toBe(1);
      let items = 0;
      await run(async (c) => void (items += c.length));
      expect(items).toBe(total);
    });
  }
});

describe('a push is stored chunk by chunk as it is read', () => {
  it('a 1,000-line push over PUSH_OFF_THREAD_MIN_BYTES: the store is asked per chunk, each before the next chunk is read; answers in body order', async () => {
    const body = Buffer.from(
      Array.from({ length: 1000 }, (_, i) =>
        JSON.stringify({ source: 'desk', id: `s-${i}`, content: `${title(i)} ${'and more words '.repeat(6)}` }),
      ).join('\n'),
    );
    expect(body.length).toBeGreaterThan(PUSH_OFF_THREAD_MIN_BYTES);
    const { store } = fileStore(false, 1000);
    const asked: number[] = [];
    const recording = {
      ingestItems: (items: SourcedItem[], at: number | (() => number)) => (
        asked.push(items.length),
        store.sources.ingestItems(items, at)
      ),
    };
    const published: string[][] = [];
    const answer = await pushArticles(
      body,
      'ndjson',
      recording,
      () => 1_800_000_000_000,
      (ids) => published.push(ids),
    );
    expect(asked).toEqual(Array(1000 / PUSH_CHUNK).fill(PUSH_CHUNK));
    expect(published).toHaveLength(1000 / PUSH_CHUNK);
    expect(answer.stored).toBe(1000);
    expect(answer.results.map((r) => r.line)).toEqual([...Array(1000).keys()].map((i) => i + 1));
    expect(await store.articles.count()).toBe(1000);
  });
});
