/**
 * Issue 19, item 1: no ingestion step holds the event loop for the whole of a large input. Machine
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
import { ingestInSlices, INGEST_SLICES, nextSliceSize, planIngest } from '../../src/store/ports/sources-plan.js';
import type { NearDuplicateRule, SourcedItem } from '../../src/store/ports/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { rssOf, title, turnsDuring } from './support.js';

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
  it('nextSliceSize grows under the budget, shrinks to it over, within its bounds', () => {
    expect(nextSliceSize(40, 5, 8, 64)).toBe(64); // under the budget: twice as many, up to the cap
    expect(nextSliceSize(40, 20, 8, 64)).toBe(16); // over it: scaled down to fit
    expect(nextSliceSize(10, 100, 8, 64)).toBe(8); // never under the floor
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
  it('ingestInSlices sized by time: every item in exactly one slice, in order, whatever the sizes', async () => {
    let t = 0;
    const seen: number[] = [];
    const items = [...Array(500).keys()];
    // 0.1 ms an item against a 6 ms budget: slices grow from the first size to the cap.
    const out = await ingestInSlices(items, async (s) => (seen.push(...s), (t += s.length * 0.1), s), {
      maxItems: 64,
      budgetMs: 6,
      now: () => t,
    });
    expect(seen).toEqual(items);
    expect(out).toEqual(items);
  });

  it('ingestInSlices when a slice stores a prefix only (a plan stopped at its budget): the rest starts the next slice; every item once, in order', async () => {
    const seen: number[] = [];
    // Each slice stores at most 3 of its items.
    const out = await ingestInSlices([...Array(20).keys()], async (s) => (seen.push(...s.slice(0, 3)), s.slice(0, 3)), {
      maxItems: 8,
    });
    expect(seen).toEqual([...Array(20).keys()]);
    expect(out).toEqual([...Array(20).keys()]);
    await expect(ingestInSlices([1, 2], async () => [])).rejects.toThrow(/answered for 0/);
  });

  it("ingestInSlices sized by the event loop's own time (busyMs: PostgreSQL's plan), not the wall time of its queries, down to minItems", async () => {
    let t = 0;
    let busy = 0;
    const sizes: number[] = [];
    // Each slice: 50 ms of queries (wall time, the loop free) and 1 ms of plan per item.
    await ingestInSlices([...Array(40).keys()], async (s) => (sizes.push(s.length), (t += 50), (busy = s.length), s), {
      maxItems: 128,
      budgetMs: 8,
      minItems: 1,
      busyMs: () => busy,
      now: () => t,
    });
    // 16 first (16 ms > 8: scaled to 8), then 8 ms each: doubled; the wall time (50 ms a slice) never counts.
    expect(sizes).toEqual([16, 8, 16]);
  });
});

describe("slices sent to a writer of their own (the SQLite service's ingest thread) are sized by its budget", () => {
  const items = (n: number): SourcedItem[] =>
    Array.from({ length: n }, (_, i) => ({
      source: 'wire',
      externalId: `w-${i}`,
      canonicalUrl: null,
      article: {
        content: `Story number ${i} of the day`,
        urgency: 'regular',
        sentiment: null,
        published_at: null,
        tickers: [],
        source: 'wire',
      },
      nearKeys: [],
    }));
  // A clock that moves 1 ms per item stored: the sizes follow from the budget alone.
  const sizedStore = (slices: { maxItems: number; budgetMs?: number }) => {
    let t = 0;
    const d = mkdtempSync(join(tmpdir(), 'fns-loop-'));
    dirs.push(d);
    const s = new SqliteStore(join(d, 'fns.sqlite'), { ingestSlices: { ...slices, now: () => t } });
    const sizes: number[] = [];
    s.sources.writeVia({
      ingestSlice: async (slice, at) => (
        sizes.push(slice.length),
        (t += slice.length),
        s.sources.ingestSlice(slice, at)
      ),
      recordPoll: async () => {},
      budgetMs: INGEST_SLICES.threadBudgetMs,
    });
    return { s, sizes };
  };

  it(`the writer's ${INGEST_SLICES.threadBudgetMs} ms instead of the event loop's ${INGEST_SLICES.budgetMs} ms: bigger slices, fewer commits, same outcomes`, async () => {
    const { s, sizes } = sizedStore({ maxItems: INGEST_SLICES.maxItems, budgetMs: INGEST_SLICES.budgetMs });
    const out = await s.sources.ingestItems(items(100), Date.now);
    // 16 first; 16 ms <= 24: twice; 32 ms > 24: scaled to 24; 24 ms <= 24: twice (the 28 left).
    expect(sizes).toEqual([16, 32, 24, 28]);
    expect(out.map((o) => o.status)).toEqual(Array(100).fill('stored'));
    expect(
      (await s.sources.ingestItems(items(100), Date.now)).map((o) => o.status === 'duplicate' && o.reason),
    ).toEqual(Array(100).fill('same-item'));
    await s.close();
  });

  it("the next call starts from the size the last one reached, not from the first guess (a poll's chunks are one ingest in several calls)", async () => {
    const { s, sizes } = sizedStore({ maxItems: INGEST_SLICES.maxItems, budgetMs: INGEST_SLICES.budgetMs });
    await s.sources.ingestItems(items(100), Date.now);
    expect(sizes).toEqual([16, 32, 24, 28]);
    sizes.length = 0;
    // 28 ms > 24: the next size is 24, and the next call starts there.
    await s.sources.ingestItems(items(148).slice(100), Date.now);
    expect(sizes[0]).toBe(24);
    await s.close();
  });

  it('slices of a fixed size stay that size', async () => {
    const { s, sizes } = sizedStore({ maxItems: 20 });
    await s.sources.ingestItems(items(50), Date.now);
    expect(sizes).toEqual([20, 20, 10]);
    await s.close();
  });
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

  it('a plan with `enough` stops before the item where it became true (one item at least): outcomes, inserts and records for that prefix only', () => {
    const rule: NearDuplicateRule = { windowMs: 86_400_000, isNearDuplicate: () => false };
    const item = (i: number): SourcedItem => ({
      source: 'wire',
      externalId: `w-${i}`,
      canonicalUrl: null,
      article: {
        content: `Test item ${i}`,
        urgency: 'regular',
        sentiment: null,
        published_at: null,
        tickers: [],
        source: 'wire',
      },
      nearKeys: [],
    });
    const empty = { bySourceItem: new Map(), byUrl: new Map(), nearCandidates: new Map(), candidates: new Map() };
    let asked = 0;
    const plan = planIngest([0, 1, 2, 3, 4].map(item), empty, rule, undefined, () => ++asked > 2);
    expect(plan.outcomes).toHaveLength(3);
    expect(plan.store).toEqual([0, 1, 2]);
    expect(plan.seen.map((s) => s.externalId)).toEqual(['w-0', 'w-1', 'w-2']);
    // Enough at once: still the first item.
    expect(planIngest([0, 1].map(item), empty, rule, undefined, () => true).outcomes).toHaveLength(1);
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
