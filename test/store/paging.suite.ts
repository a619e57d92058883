/**
 * Paging and the ticker filter of the list store, one suite for every engine
 * (paging-sqlite.test.ts, paging-postgres.test.ts): property tests with fast-check over random
 * archives (many articles sharing one received_at, bursts larger than the page, articles inserted
 * while a reader pages), and the ticker index (filled on every insert path, backfilled by its migration).
 */
import { expect } from 'vitest';
import { registerStoreTests } from './suite-kit.js';
import fc from 'fast-check';
import { limitBounds, urgencies, type Urgency } from '../../src/contract/index.js';
import type { StoredArticle } from '../../src/domain/articles.js';
import type { ListQuery, NewArticle, SourcedItem, Store } from '../../src/store/ports/index.js';
import { ulidTimePrefix } from '../../src/store/ports/ids.js';
import type { StoreHarness } from './ports.suite.js';

export interface PagingHarness extends StoreHarness {
  /** Property runs per test (each opens a fresh store). */
  runs: number;
  /**
   * Puts the store back to before the ticker-index migration (table dropped, version lowered); `reopen` applies it
   * again.
   */
  rewindTickerIndex(store: Store): Promise<void>;
  reopen(store: Store): Promise<Store>;
}

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const SYMBOLS = ['AAPL', 'MSFT', 'SPY', 'BRK.B'] as const;

const newArticle = (n: number, urgency: Urgency, tickers: string[]): NewArticle => ({
  content: `article ${n}`,
  urgency,
  sentiment: null,
  published_at: null,
  tickers: tickers.map((ticker) => ({ ticker, sentiment: 'neutral' as const })),
});

/** A burst: `size` articles received at one time (`at` ms after T0), so all share one received_at. */
interface Burst {
  at: number;
  size: number;
  urgencies: Urgency[];
  tickers: string[][];
}

const burstArb = (maxSize: number): fc.Arbitrary<Burst> =>
  fc.integer({ min: 1, max: maxSize }).chain((size) =>
    fc.record({
      // Few distinct times: many bursts share a millisecond too.
      at: fc.constantFrom(0, 1, 2, 1000, 60_000),
      size: fc.constant(size),
      urgencies: fc.array(fc.constantFrom(...urgencies), { minLength: size, maxLength: size }),
      tickers: fc.array(fc.subarray([...SYMBOLS], { maxLength: 2 }), { minLength: size, maxLength: size }),
    }),
  );

interface Filter {
  urgency?: Urgency;
  tickers?: string[];
}
const filterArb: fc.Arbitrary<Filter> = fc.record(
  { urgency: fc.constantFrom(...urgencies), tickers: fc.subarray([...SYMBOLS], { minLength: 1, maxLength: 3 }) },
  { requiredKeys: [] },
);

let counter = 0;
async function insertBurst(s: Store, b: Burst, at: number | (() => number)): Promise<StoredArticle[]> {
  return s.articles.insert(
    Array.from({ length: b.size }, (_, i) => newArticle(++counter, b.urgencies[i]!, b.tickers[i]!)),
    at,
  );
}

const matches = (a: StoredArticle, f: Filter) =>
  (f.urgency === undefined || a.urgency === f.urgency) &&
  (f.tickers === undefined || a.tickers.some((t) => f.tickers!.includes(t.ticker)));

/** Every article of the store, oldest first (a full scan in pages of the contract's maximum). */
async function everything(s: Store): Promise<StoredArticle[]> {
  const out: StoredArticle[] = [];
  for (;;) {
    const page = await s.articles.list({
      afterMs: 0,
      limit: limitBounds.max,
      ascending: true,
      ...(out.length ? { afterId: out[out.length - 1]!.id } : {}),
    });
    out.push(...page);
    if (page.length < limitBounds.max) return out;
  }
}

/** The ids `id > lower` and of a later millisecond than `afterMs`, in the window of `f`, oldest first. */
function expectedAfter(all: StoredArticle[], afterId: string | undefined, afterMs: number, f: Filter): string[] {
  const timeBound = ulidTimePrefix(afterMs) + 'ZZZZZZZZZZZZZZZZ';
  return all
    .filter((a) => a.id > timeBound && (afterId === undefined || a.id > afterId) && matches(a, f))
    .map((a) => a.id)
    .sort();
}

export function describeStorePaging(name: string, h: PagingHarness): number {
  const tests: [string, () => Promise<void>][] = [];
  const test = (title: string, fn: () => Promise<void>) => void tests.push([title, fn]);
  const stores: Store[] = [];
  const open = async () => {
    const s = await h.open();
    stores.push(s);
    return s;
  };
  const closeAll = async () => {
    for (const s of stores.splice(0)) await s.close().catch(() => {});
  };

  test('following `after` with next yields every later article once, oldest first, with ties, bursts larger than the page and inserts while paging', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(burstArb(25), { minLength: 1, maxLength: 6 }),
        fc.array(burstArb(25), { maxLength: 4 }),
        fc.integer({ min: 1, max: 7 }),
        filterArb,
        fc.nat(),
        fc.constantFrom(0, T0 - 1, T0 + 500),
        async (archive, during, limit, filter, startPick, afterMs) => {
          const s = await open();
          try {
            for (const b of archive) await insertBurst(s, b, T0 + b.at);
            const before = await everything(s);
            // Start after one of the stored articles, or from the beginning of the window.
            const start =
              startPick % (before.length + 1) === before.length
                ? undefined
                : before[startPick % (before.length + 1)]!.id;
            const seen: string[] = [];
            let cursor = start;
            const pending = [...during];
            for (let pages = 0; pages < 1000; pages++) {
              const q: ListQuery = {
                afterMs,
                limit,
                ascending: true,
                ...filter,
                ...(cursor ? { afterId: cursor } : {}),
              };
              const page = await s.articles.list(q);
              seen.push(...page.map((a) => a.id));
              if (page.length > 0) cursor = page[page.length - 1]!.id;
              // Another writer commits between two pages (the clock form: as the service and the CLI insert).
              const next = pending.shift();
              if (next) await insertBurst(s, next, () => T0 + 60_000 + next.at);
              else if (page.length < limit) break;
            }
            const expected = expectedAfter(await everything(s), start, afterMs, filter);
            expect(seen).toEqual(expected);
          } finally {
            await closeAll();
          }
        },
      ),
      { numRuns: h.runs, seed: 20261121 },
    );
  });

  test('paging backwards with `before` yields every article of the window once, newest first, whatever arrives meanwhile', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(burstArb(25), { minLength: 1, maxLength: 6 }),
        fc.array(burstArb(10), { maxLength: 3 }),
        fc.integer({ min: 1, max: 7 }),
        filterArb,
        fc.constantFrom(0, T0 - 1, T0 + 1),
        async (archive, during, limit, filter, afterMs) => {
          const s = await open();
          try {
            for (const b of archive) await insertBurst(s, b, T0 + b.at);
            const expected = expectedAfter(await everything(s), undefined, afterMs, filter).reverse();
            const seen: string[] = [];
            let cursor: string | undefined;
            const pending = [...during];
            for (let pages = 0; pages < 1000; pages++) {
              const page = await s.articles.list({
                afterMs,
                limit,
                ...filter,
                ...(cursor ? { beforeId: cursor } : {}),
              });
              seen.push(...page.map((a) => a.id));
              const next = pending.shift();
              if (next) await insertBurst(s, next, () => T0 + 120_000 + next.at);
              if (page.length < limit) break;
              cursor = page[page.length - 1]!.id;
            }
            expect(seen).toEqual(expected);
          } finally {
            await closeAll();
          }
        },
      ),
      { numRuns: h.runs, seed: 20261122 },
    );
  });

  test('listJson pages say exactly what list pages say, for every shape (cursors, order, urgency, tickers)', async () => {
    const s = await open();
    try {
      for (const b of [
        {
          at: 0,
          size: 30,
          urgencies: Array(30).fill('regular'),
          tickers: Array.from({ length: 30 }, (_, i) => [SYMBOLS[i % 4]!]),
        },
        {
          at: 0,
          size: 12,
          urgencies: Array(12).fill('breaking'),
          tickers: Array.from({ length: 12 }, (_, i) => (i % 3 ? ['AAPL', 'MSFT'] : [])),
        },
      ] as Burst[]) {
        await insertBurst(s, b, T0 + b.at);
      }
      const all = await everything(s);
      const mid = all[20]!.id;
      const shapes: ListQuery[] = [
        { afterMs: 0, limit: 10 },
        { afterMs: 0, limit: 10, afterId: mid, ascending: true },
        { afterMs: 0, limit: 10, beforeId: mid },
        { afterMs: 0, limit: 10, tickers: ['AAPL'] },
        {
          afterMs: 0,
          limit: 10,
          tickers: ['AAPL', 'MSFT', 'AAPL'],
          urgency: 'breaking',
          afterId: mid,
          ascending: true,
        },
        { afterMs: 0, limit: 5, tickers: ['SPY', 'BRK.B'], beforeId: mid },
      ];
      for (const q of shapes) {
        const rows = await s.articles.list(q);
        for (const withTickers of [true, false]) {
          const json = await s.articles.listJson(q, withTickers);
          expect(json).toEqual(rows.map((a) => JSON.stringify(withTickers ? a : { ...a, tickers: undefined })));
        }
      }
      // An article about two of the symbols is listed once.
      const both = await s.articles.list({ afterMs: 0, limit: 100, tickers: ['AAPL', 'MSFT'], urgency: 'breaking' });
      expect(new Set(both.map((a) => a.id)).size).toBe(both.length);
      expect(both).toHaveLength(8);
    } finally {
      await closeAll();
    }
  });

  test('the ticker index is filled by insert and by the sources ingest path, and backfilled by its migration', async () => {
    let s = await open();
    try {
      await s.articles.insert([newArticle(1, 'regular', ['AAPL', 'MSFT']), newArticle(2, 'flash', [])], T0);
      const item = (n: number, tickers: string[]): SourcedItem => ({
        source: 'wire',
        externalId: `x${n}`,
        canonicalUrl: null,
        article: newArticle(100 + n, 'breaking', tickers),
        nearKeys: [],
      });
      const outcomes = await s.sources.ingestItems([item(1, ['NVDA']), item(2, ['AAPL'])], () => T0 + 10);
      expect(outcomes.map((o) => o.status)).toEqual(['stored', 'stored']);
      const about = async (store: Store, t: string) =>
        (await store.articles.list({ afterMs: 0, limit: 100, tickers: [t] })).map((a) => a.content);
      expect(await about(s, 'AAPL')).toEqual(['article 102', 'article 1']);
      expect(await about(s, 'NVDA')).toEqual(['article 101']);
      expect(await about(s, 'MSFT')).toEqual(['article 1']);
      // An archive from before the index: the migration builds it from the stored tickers.
      await h.rewindTickerIndex(s);
      s = await h.reopen(s);
      stores.push(s);
      expect(await about(s, 'AAPL')).toEqual(['article 102', 'article 1']);
      expect(await about(s, 'NVDA')).toEqual(['article 101']);
      expect(await s.articles.list({ afterMs: 0, limit: 100, tickers: ['AAPL'], urgency: 'breaking' })).toHaveLength(1);
    } finally {
      await closeAll();
    }
  });

  registerStoreTests(`store paging: ${name}`, tests, h, closeAll, { timeout: 120_000 });
  return tests.length;
}
