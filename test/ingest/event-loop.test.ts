/**
 * No ingestion step holds the event loop for the whole of a large input. Machine
 * independent: slices are bounded by item count here (maxItems), and the tests count the turns the event
 * loop got (a setImmediate chain, a timer) while N items were ingested, never a duration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingest } from '../../src/cli/operator.js';
import { mapInSlices, sliceTurns } from '../../src/runtime/slices.js';
import { pushArticles, readPushBody } from '../../src/ops/push.js';
import { parseFeed, toSourcedItems, toSourcedItemsInSlices } from '../../src/sources/index.js';
import Database from 'better-sqlite3';
import { planIngest } from '../../src/store/ports/sources-plan.js';
import { BUSY_PATIENCE_MS } from '../../src/store/ports/errors.js';
import { ingestInSlices, INGEST_SLICE_ITEMS } from '../../src/store/ports/ingest-slice.js';
import type { NearDuplicateRule, SourcedItem } from '../../src/store/ports/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { rssOf, title, turnsDuring } from './support.js';

const T = 1_800_000_000_000;
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const store = (maxItems: number) => {
  const d = mkdtempSync(join(tmpdir(), 'fns-loop-'));
  dirs.push(d);
  return new SqliteStore(join(d, 'fns.sqlite'), { ingestSlices: { maxItems } });
};

describe('the slices helpers give the event loop a turn between slices and keep results and order', () => {
  it('mapInSlices over 100 items in slices of 10: 9 turns, same results in order', async () => {
    let yields = 0;
    const { result, turns } = await turnsDuring(() =>
      mapInSlices([...Array(100).keys()], (x) => x * 2, { maxItems: 10, onYield: () => yields++ }),
    );
    expect(result).toEqual([...Array(100).keys()].map((x) => x * 2));
    expect(yields).toBeGreaterThanOrEqual(9);
    expect(turns).toBeGreaterThanOrEqual(9);
  });
  it('sliceTurns resolves at once within a slice and after a turn once the slice is full', async () => {
    let yields = 0;
    const turn = sliceTurns({ maxItems: 3, onYield: () => yields++ });
    for (let i = 0; i < 10; i++) await turn();
    expect(yields).toBeGreaterThanOrEqual(3);
  });
});

describe('store: ingestItems runs in short transactions with a turn of the event loop between them', () => {
  it('200 items in slices of 20: at least 9 turns during the call, outcomes those of one transaction', async () => {
    const items = toSourcedItems(
      { name: 'wire', urgency: 'auto' },
      parseFeed(new TextEncoder().encode(rssOf(200)), { baseUrl: 'https://ex.com/' }).items,
    );
    const sliced = store(20);
    const whole = store(10_000);
    const { result, turns } = await turnsDuring(() => sliced.sources.ingestItems(items, 1_800_000_000_000));
    const once = await whole.sources.ingestItems(items, 1_800_000_000_000);
    expect(turns).toBeGreaterThanOrEqual(9);
    expect(result.map((o) => o.status)).toEqual(once.map((o) => o.status));
    expect(await sliced.articles.count()).toBe(await whole.articles.count());
    // Again: every item a same-item duplicate, across slices too.
    expect((await sliced.sources.ingestItems(items, 1_800_000_000_001)).every((o) => o.status === 'duplicate')).toBe(
      true,
    );
    await sliced.close();
    await whole.close();
  });
  it('ingestInSlices: one call per slice, in order', async () => {
    const calls: number[][] = [];
    const out = await ingestInSlices([1, 2, 3, 4, 5], async (s) => (calls.push(s), s.map((x) => -x)), { maxItems: 2 });
    expect(calls).toEqual([[1, 2], [3, 4], [5]]);
    expect(out).toEqual([-1, -2, -3, -4, -5]);
  });
  it(`ingestInSlices: slices of ${INGEST_SLICE_ITEMS} items by default; a slice answered for fewer items than it had is an error`, async () => {
    const sizes: number[] = [];
    await ingestInSlices([...Array(INGEST_SLICE_ITEMS * 2 + 1).keys()], async (s) => (sizes.push(s.length), s));
    expect(sizes).toEqual([INGEST_SLICE_ITEMS, INGEST_SLICE_ITEMS, 1]);
    await expect(ingestInSlices([1, 2], async () => [])).rejects.toThrow(/answered for 0/);
  });
});

describe('store: a slice that finds the write lock held by another process waits for it, holding no event loop', () => {
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  it('a busy slice is tried again until it goes through; another error is not retried', async () => {
    let tries = 0;
    const out = await ingestInSlices([1, 2, 3], async (s) => {
      if (++tries <= 3) throw busy();
      return s;
    });
    expect(out).toEqual([1, 2, 3]);
    expect(tries).toBe(4);
    let other = 0;
    await expect(
      ingestInSlices([1], async () => {
        other++;
        throw new Error('disk I/O error');
      }),
    ).rejects.toThrow(/disk I\/O/);
    expect(other).toBe(1);
  });

  it("the service's store (a few ms of busy wait) while a second connection holds the lock: every item stored once it is released, and the loop ran meanwhile", async () => {
    const d = mkdtempSync(join(tmpdir(), 'fns-loop-'));
    dirs.push(d);
    const file = join(d, 'fns.sqlite');
    const service = new SqliteStore(file, { busyTimeoutMs: 5 });
    const cli = new Database(file);
    cli.exec('BEGIN IMMEDIATE');
    const items = toSourcedItems(
      { name: 'wire', urgency: 'auto' },
      parseFeed(new TextEncoder().encode(rssOf(50)), { baseUrl: 'https://ex.com/' }).items,
    );
    let released = false;
    const ingesting = service.sources.ingestItems(items, 1_800_000_000_000);
    // The other process commits a moment later: the ingest, still waiting, then goes through.
    setTimeout(() => {
      cli.exec('COMMIT');
      released = true;
    }, 100);
    const out = await ingesting;
    expect(released).toBe(true);
    expect(out.every((o) => o.status === 'stored')).toBe(true);
    expect(await service.articles.count()).toBe(50);
    cli.close();
    await service.close();
  });

  it(
    "a poll's record waits for the lock the same way (its counters are kept); a slice still refused after BUSY_PATIENCE_MS fails with SQLITE_BUSY",
    async () => {
      const d = mkdtempSync(join(tmpdir(), 'fns-loop-'));
      dirs.push(d);
      const file = join(d, 'fns.sqlite');
      const service = new SqliteStore(file, { busyTimeoutMs: 5 });
      const cli = new Database(file);
      try {
        await service.sources.add({ name: 'w', url: 'https://ex.com/feed', everyMs: 60_000, urgency: 'auto' }, T);
        cli.exec('BEGIN IMMEDIATE');
        setTimeout(() => cli.exec('COMMIT'), 100);
        await service.sources.recordPoll('w', 'me', {
          at: T,
          status: 200,
          error: null,
          etag: null,
          lastModified: null,
          nextPollAt: T + 60_000,
          failures: 0,
          minIntervalMs: null,
          seen: 2,
          ingested: 1,
          deduplicated: 1,
        });
        expect(await service.sources.get('w')).toMatchObject({ itemsSeen: 2, itemsIngested: 1, itemsDeduplicated: 1 });
        cli.exec('BEGIN IMMEDIATE');
        const items = toSourcedItems(
          { name: 'wire', urgency: 'auto' },
          parseFeed(new TextEncoder().encode(rssOf(1)), { baseUrl: 'https://ex.com/' }).items,
        );
        await expect(service.sources.ingestItems(items, T)).rejects.toMatchObject({
          code: expect.stringMatching(/^SQLITE_BUSY/),
        });
        cli.exec('ROLLBACK');
        expect(await service.articles.count()).toBe(0);
      } finally {
        if (cli.inTransaction) cli.exec('ROLLBACK');
        cli.close();
        await service.close();
      }
    },
    BUSY_PATIENCE_MS + 10_000,
  );
});

describe("near-duplicates within one batch: an item is compared with other sources' items only", () => {
  it("a one-source batch of 2,000 look-alike headlines asks the rule nothing; another source's look-alike is still compared", () => {
    let asked = 0;
    const rule: NearDuplicateRule = { windowMs: 86_400_000, isNearDuplicate: () => (asked++, false) };
    const item = (source: string, i: number): SourcedItem => ({
      source,
      externalId: `${source}-${i}`,
      canonicalUrl: null,
      article: {
        content: `Test item ${i}`,
        urgency: 'regular',
        sentiment: null,
        published_at: null,
        tickers: [],
        source,
      },
      nearKeys: ['k1', 'k2', 'k3'],
    });
    const empty = { bySourceItem: new Map(), byUrl: new Map(), nearCandidates: new Map(), candidates: new Map() };
    const one = planIngest(
      Array.from({ length: 2000 }, (_, i) => item('wire', i)),
      empty,
      rule,
    );
    expect(one.store).toHaveLength(2000);
    expect(asked).toBe(0);
    // Two sources: the other source's look-alikes are still candidates (capped as before).
    const two = planIngest([item('a', 1), item('b', 2)], empty, { ...rule, isNearDuplicate: () => (asked++, true) });
    expect(two.outcomes[1]).toMatchObject({ status: 'duplicate', reason: 'near-duplicate' });
  });
});

describe('poll: a small feed is enriched in slices (a large one is prepared on a worker thread: off-thread.test.ts)', () => {
  it('toSourcedItemsInSlices: 300 items in slices of 25 give 11 turns; same items as toSourcedItems', async () => {
    const items = parseFeed(new TextEncoder().encode(rssOf(300)), { baseUrl: 'https://ex.com/' }).items;
    let yields = 0;
    const { result, turns } = await turnsDuring(() =>
      toSourcedItemsInSlices({ name: 'w', urgency: 'auto' }, items, { maxItems: 25, onYield: () => yields++ }),
    );
    expect(yields).toBeGreaterThanOrEqual(11);
    expect(turns).toBeGreaterThanOrEqual(11);
    expect(result).toEqual(toSourcedItems({ name: 'w', urgency: 'auto' }, items));
  });
});

describe('push: the body is read and checked in slices, and stored in slices', () => {
  it('300 lines in slices of 20: at least 14 turns reading, the store in slices too; every line stored', async () => {
    const body = Array.from({ length: 300 }, (_, i) =>
      JSON.stringify({ source: 'desk', id: `d-${i}`, content: title(i) }),
    ).join('\n');
    let yields = 0;
    const { result: lines, turns } = await turnsDuring(() =>
      readPushBody(body, 'ndjson', { maxItems: 20, onYield: () => yields++ }),
    );
    expect(yields).toBeGreaterThanOrEqual(14);
    expect(turns).toBeGreaterThanOrEqual(14);
    expect(lines.map((l) => l.line)).toEqual([...Array(300).keys()].map((i) => i + 1));
    const s = store(25);
    const { result: answer, turns: storeTurns } = await turnsDuring(() =>
      pushArticles(Buffer.from(body), 'ndjson', s.sources, () => 1_800_000_000_000),
    );
    expect(storeTurns).toBeGreaterThanOrEqual(11);
    expect(answer.stored).toBe(300);
    await s.close();
  });
});

describe('CLI: fns articles ingest gives the event loop a turn while it parses lines', () => {
  it('100 lines in slices of 10: 9 turns; every line stored', async () => {
    const inserted: number[] = [];
    const fake = {
      ingestItems: async (a: unknown[]) => (
        inserted.push(a.length),
        a.map((_, i) => ({
          status: 'stored' as const,
          id: `id-${inserted.length}-${i}`,
          received_at: '2026-11-24T00:00:00Z',
        }))
      ),
    };
    let yields = 0;
    const lines = Array.from({ length: 100 }, (_, i) => JSON.stringify({ content: title(i) }));
    const { result: report, turns } = await turnsDuring(() =>
      ingest(fake, lines, () => 0, { slices: { maxItems: 10, onYield: () => yields++ } }),
    );
    expect(yields).toBeGreaterThanOrEqual(9);
    expect(turns).toBeGreaterThanOrEqual(9);
    expect(report).toMatchObject({ lines: 100, ingested: 100, errors: [] });
  });
});
