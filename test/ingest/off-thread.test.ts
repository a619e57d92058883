/**
 * The parsing of a large input runs on worker threads, with the same results as on the event loop's thread: a
 * large feed parsed, mapped and enriched on one (src/sources/off-thread.ts); a large push body read and checked on
 * one (src/ops/push.ts readPushBodyOffThread). Both hand their results on chunk by chunk, the next one only
 * once the caller took the one before (a poll or a push stores each chunk first), so a large input is
 * never all on the event loop's heap at once. Machine independent: turns of the event loop and chunks
 * are counted, never durations.
 */
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
import { OFF_THREAD_MIN_BYTES, prepareFeedItems, stopFeedPreparer } from '../../src/sources/off-thread.js';
import { PREPARED_CHUNK } from '../../src/sources/pipeline.js';
import type { SourcedItem } from '../../src/store/ports/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { rssOf, title } from './support.js';

const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterAll(async () => {
  await stopFeedPreparer();
  await stopPushReader();
  for (const s of stores) await s.close().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fileStore = (maxItems: number) => {
  const d = mkdtempSync(join(tmpdir(), 'fns-off-'));
  dirs.push(d);
  const file = join(d, 'fns.sqlite');
  const s = new SqliteStore(file, { busyTimeoutMs: 5, ingestSlices: { maxItems } });
  stores.push(s);
  return { store: s, file };
};

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
    const { store } = fileStore(1000);
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
