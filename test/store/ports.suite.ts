/**
 * One behavioural suite for the store ports, run against every engine (sqlite-ports.test.ts,
 * postgres-ports.test.ts). `open` gives a fresh, empty store; `peer` a second, independent connection
 * to the same data (another process's view: a second SqliteStore on the file, a second pool).
 */
import { expect } from 'vitest';
import { article, OpenedStores, registerStoreTests } from './suite-kit.js';
import { articleRules, limitBounds } from '../../src/contract/index.js';
import { toIso } from '../../src/domain/tiers.js';
import type { Store } from '../../src/store/ports/index.js';

export { article } from './suite-kit.js';
import { until } from '../support/wait.js';

export interface StoreHarness {
  open(): Promise<Store>;
  peer(store: Store): Promise<Store>;
  /** After every test: whatever open/peer created. */
  cleanup(): Promise<void>;
  /** The engine hands out leased queue rows only once until the lease expires (PostgreSQL). */
  leases: boolean;
  /** Register every test as skipped (the engine is not reachable). */
  skip?: boolean;
}

const T0 = Date.parse('2026-11-21T12:00:00.000Z');

/** Registers the suite; returns how many tests it registered (for a loud "skipped N tests" line). */
export function describeStorePorts(name: string, h: StoreHarness): number {
  // Collected first, registered in the describe block below: the count is known before vitest runs it.
  const tests: [string, () => Promise<void>][] = [];
  const test = (title: string, fn: () => Promise<void>) => void tests.push([title, fn]);
  const opened = new OpenedStores();
  const open = async () => opened.track(await h.open());
  const peer = async (s: Store) => opened.track(await h.peer(s));

  test('accounts: create, read, change tier, cancel once', async () => {
    const s = await open();
    const paid = await s.accounts.createAccount('pro', T0);
    expect(paid).toMatchObject({ tier: 'pro', cancelledAt: null });
    expect(paid.periodEnd).toMatch(/^20\d\d-/);
    const free = await s.accounts.createAccount('free', T0, 'acct_fixed');
    expect(free).toEqual({ id: 'acct_fixed', tier: 'free', periodEnd: null, cancelledAt: null });
    expect(await s.accounts.getAccount('acct_missing')).toBeUndefined();
    expect(await s.accounts.getAccount(paid.id)).toEqual(paid);
    const cancelled = await s.accounts.cancel(paid.id, T0 + 1000);
    expect(cancelled?.cancelledAt).toBe(toIso(T0 + 1000));
    // A second cancel keeps the first time.
    expect((await s.accounts.cancel(paid.id, T0 + 5000))?.cancelledAt).toBe(cancelled?.cancelledAt);
    const upgraded = await s.accounts.setTier(paid.id, 'max', T0 + 2000);
    expect(upgraded).toMatchObject({ tier: 'max', cancelledAt: null });
    expect((await s.accounts.setTier(paid.id, 'free', T0))?.periodEnd).toBeNull();
    expect(await s.accounts.setTier('acct_missing', 'pro', T0)).toBeUndefined();
    expect(engineName(s)).toBe(s.engine);
  });

  test('keys: stored by hash, found, (de)activated, listed in creation order', async () => {
    const s = await open();
    const a = await s.accounts.createAccount('starter', T0);
    const b = await s.accounts.createAccount('pro', T0);
    await s.accounts.createKey(a.id, 'hash-1', 'key_1', T0);
    await s.accounts.createKey(b.id, 'hash-2', 'key_2', T0 + 1);
    await s.accounts.createKey(a.id, 'hash-3', 'key_0', T0 + 2);
    expect(await s.accounts.findKey('hash-1')).toEqual({ keyId: 'key_1', accountId: a.id, active: true });
    expect(await s.accounts.findKey('nope')).toBeUndefined();
    expect(await s.accounts.setKeyActive('key_1', false)).toEqual({ keyId: 'key_1', accountId: a.id, active: false });
    expect((await s.accounts.findKey('hash-1'))?.active).toBe(false);
    expect(await s.accounts.setKeyActive('key_missing', true)).toBeUndefined();
    const all = await s.accounts.listKeys();
    expect(all.map((k) => k.keyId)).toEqual(['key_1', 'key_2', 'key_0']);
    expect(all[1]).toEqual({ keyId: 'key_2', accountId: b.id, active: true, createdAt: toIso(T0 + 1) });
    expect((await s.accounts.listKeys(a.id)).map((k) => k.keyId)).toEqual(['key_1', 'key_0']);
    expect(await s.accounts.listKeys('acct_missing')).toEqual([]);
    await expect(s.accounts.createKey(a.id, 'hash-1', 'key_dup', T0)).rejects.toThrow();
  });

  test('insert, list, listJson, getMany, count: newest first, filters, exact Article JSON', async () => {
    const s = await open();
    const tricky = 'He said "rates" \\ up\nnext\tline é 📈 \u0001 </script>';
    const first = await s.articles.insert(
      [article('first', { urgency: 'breaking', sentiment: 'hawkish', published_at: '2026-11-21T11:59:00Z' })],
      T0,
    );
    const more = await s.articles.insert(
      [
        article(tricky, { tickers: [{ ticker: 'AAPL', sentiment: 'positive' }] }),
        article('third', { source: 'wire.a_1', url: 'https://x.example/a?b="c"&d=\u00e9\\' }),
      ],
      T0 + 10,
    );
    expect(more.map((a) => a.received_at)).toEqual([new Date(T0 + 10).toISOString(), new Date(T0 + 10).toISOString()]);
    expect(more[0]!.id > first[0]!.id && more[1]!.id > more[0]!.id).toBe(true);
    expect(await s.articles.count()).toBe(3);

    const listed = await s.articles.list({ afterMs: 0, limit: 10 });
    expect(listed.map((a) => a.content)).toEqual(['third', tricky, 'first']);
    expect(listed[2]).toEqual(first[0]);
    expect(listed[1]!.tickers).toEqual([{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }]);
    expect((await s.articles.list({ afterMs: 0, urgency: 'breaking', limit: 10 })).map((a) => a.content)).toEqual([
      'first',
    ]);
    // since is exclusive, by receive time.
    expect((await s.articles.list({ afterMs: T0, limit: 10 })).map((a) => a.content)).toEqual(['third', tricky]);
    expect(await s.articles.list({ afterMs: T0 + 10, limit: 10 })).toEqual([]);

    const json = (a: (typeof listed)[number], withTickers: boolean) =>
      JSON.stringify({
        id: a.id,
        content: a.content,
        urgency: a.urgency,
        sentiment: a.sentiment,
        published_at: a.published_at,
        received_at: a.received_at,
        source: a.source,
        url: a.url,
        ...(withTickers ? { tickers: a.tickers } : {}),
      });
    expect(await s.articles.listJson({ afterMs: 0, limit: 10 }, true)).toEqual(listed.map((a) => json(a, true)));
    expect(await s.articles.listJson({ afterMs: 0, limit: 10 }, false)).toEqual(listed.map((a) => json(a, false)));
    expect(await s.articles.listJson({ afterMs: 0, urgency: 'breaking', limit: 10 }, false)).toEqual([
      json(listed[2]!, false),
    ]);

    expect((await s.articles.getMany([listed[0]!.id, 'missing', listed[2]!.id])).map((a) => a.content)).toEqual([
      'third',
      'first',
    ]);
    expect(await s.articles.getMany([])).toEqual([]);
    expect(await s.articles.insert([], T0)).toEqual([]);
  });

  test('what is stored conforms to the contract; limit is clamped to its bounds', async () => {
    const s = await open();
    const [stored] = await s.articles.insert(
      [
        article('tickers', {
          tickers: [
            { ticker: 'AAPL', sentiment: 'positive' },
            { ticker: 'AAPL', sentiment: 'negative' },
            { ticker: 'bad ticker!', sentiment: 'neutral' },
          ],
        }),
      ],
      T0,
    );
    expect(stored!.tickers).toEqual([{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }]);
    expect((await s.articles.getMany([stored!.id]))[0]!.tickers).toEqual([
      { ticker: 'AAPL', sentiment: 'positive', relevance: 1 },
    ]);
    await expect(s.articles.insert([article('x'.repeat(articleRules.contentMaxLength + 1))], T0)).rejects.toThrow(
      RangeError,
    );
    expect(await s.articles.count()).toBe(1);

    await s.articles.insert(
      Array.from({ length: limitBounds.max + 4 }, (_, i) => article(`n${i}`)),
      T0 + 1,
    );
    expect(await s.articles.list({ afterMs: 0, limit: limitBounds.max + 50 })).toHaveLength(limitBounds.max);
    expect(await s.articles.listJson({ afterMs: 0, limit: 1e9 }, false)).toHaveLength(limitBounds.max);
    expect(await s.articles.listJson({ afterMs: 0, limit: Number.NaN }, true)).toHaveLength(limitBounds.max);
    expect(await s.articles.list({ afterMs: 0, limit: 0 })).toHaveLength(limitBounds.min);
  });

  test('relevance: stored per ticker (most relevant first, two decimals, 1 when not given) and filtered by minRelevance', async () => {
    const s = await open();
    const [passing, subject, plain] = await s.articles.insert(
      [
        article('passing', {
          tickers: [
            { ticker: 'MSFT', sentiment: 'neutral', relevance: 0.9 },
            { ticker: 'AAPL', sentiment: 'neutral', relevance: 0.3 },
          ],
        }),
        article('subject', { tickers: [{ ticker: 'AAPL', sentiment: 'positive', relevance: 0.987 }] }),
        article('plain', { tickers: [{ ticker: 'AAPL', sentiment: 'negative' }] }),
      ],
      T0,
    );
    expect(passing!.tickers).toEqual([
      { ticker: 'MSFT', sentiment: 'neutral', relevance: 0.9 },
      { ticker: 'AAPL', sentiment: 'neutral', relevance: 0.3 },
    ]);
    expect(subject!.tickers[0]!.relevance).toBe(0.99);
    expect(plain!.tickers[0]!.relevance).toBe(1);
    const about = async (minRelevance?: number) =>
      (
        await s.articles.list({
          afterMs: 0,
          limit: 10,
          tickers: ['AAPL'],
          ...(minRelevance === undefined ? {} : { minRelevance }),
        })
      )
        .map((a) => a.content)
        .sort();
    expect(await about()).toEqual(['plain', 'subject']);
    expect(await about(0)).toEqual(['passing', 'plain', 'subject']);
    expect(await about(0.3)).toEqual(['passing', 'plain', 'subject']);
    expect(await about(1)).toEqual(['plain']);
    const json = await s.articles.listJson({ afterMs: 0, limit: 10, tickers: ['AAPL'], minRelevance: 0.5 }, true);
    expect(json.map((j) => JSON.parse(j).tickers)).toEqual([plain!.tickers, subject!.tickers]);
  });

  test('change feed: feedAfter in insertion order from any seq, latestSeq', async () => {
    const s = await open();
    expect(await s.articles.latestSeq()).toBe(0);
    expect(await s.articles.feedAfter(0, 10)).toEqual([]);
    const a = await s.articles.insert([article('a'), article('b')], T0);
    const b = await s.articles.insert([article('c')], T0 + 5);
    const feed = await s.articles.feedAfter(0, 10);
    expect(feed.map((e) => e.article)).toEqual([...a, ...b]);
    const seqs = feed.map((e) => e.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(3);
    expect(await s.articles.latestSeq()).toBe(seqs[2]);
    expect((await s.articles.feedAfter(seqs[0]!, 1)).map((e) => e.article.content)).toEqual(['b']);
    expect(await s.articles.feedAfter(seqs[2]!, 10)).toEqual([]);
  });

  test('with a clock, received_at is never earlier than the newest article; ids follow within one ms', async () => {
    const s = await open();
    const [late] = await s.articles.insert([article('late')], () => T0 + 8600);
    const early = await s.articles.insert([article('early clock'), article('same batch')], () => T0);
    for (const a of early) {
      expect(a.id > late!.id).toBe(true);
      expect(a.received_at).toBe(late!.received_at);
    }
    expect(early[1]!.id > early[0]!.id).toBe(true);
    const [later] = await s.articles.insert([article('later')], () => T0 + 9000);
    expect(later!.received_at).toBe(new Date(T0 + 9000).toISOString());
    const feed = await s.articles.feedAfter(0, 10);
    const ids = feed.map((e) => e.article.id);
    expect(ids).toEqual([...ids].sort());
  });

  test('two writers on the same data: id, received_at and seq orders agree', async () => {
    const s = await open();
    const p = await peer(s);
    let tick = T0;
    // Each writer's clock runs behind the other's commits half of the time.
    const writes = Array.from({ length: 16 }, (_, i) =>
      (i % 2 ? s : p).articles.insert([article(`w${i}a`), article(`w${i}b`)], () => (tick += i % 3 === 0 ? -7 : 3)),
    );
    await Promise.all(writes);
    const feed = await s.articles.feedAfter(0, 100);
    expect(feed).toHaveLength(32);
    const ids = feed.map((e) => e.article.id);
    expect(ids).toEqual([...ids].sort());
    const times = feed.map((e) => Date.parse(e.article.received_at));
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(await p.articles.latestSeq()).toBe(feed[31]!.seq);
  });

  test('changes: a commit by another connection wakes `follow` and moves the freshness generation', async () => {
    const s = await open();
    const p = await peer(s);
    const wakers = new Set<() => void>();
    let wakes = 0;
    const problems: string[] = [];
    const stop = await s.changes.follow({
      wake: () => {
        wakes++;
        wakers.forEach((w) => w());
      },
      onReconnect: () => problems.push('reconnected'),
      onError: (m) => problems.push(m),
      onUnavailable: (m) => problems.push(m),
    });
    expect(stop).toBeTypeOf('function');
    // A clock that never moves: only a commit and its wake-up can move the generation.
    const freshness = s.changes.freshness({ wake: (w) => (wakers.add(w), () => wakers.delete(w)), monotonic: () => 0 });
    try {
      const before = freshness.generation();
      expect(freshness.generation()).toBe(before);
      await p.articles.insert([article('committed by the peer')], T0);
      await until(() => wakes > 0, 'a wake-up after the peer commit');
      expect(freshness.generation()).not.toBe(before);
      expect(problems).toEqual([]);
    } finally {
      freshness.close();
      await stop!();
    }
  });

  test('embedding queue: oldest first, stored vectors leave it, refused ones go back and are dropped after maxAttempts', async () => {
    const s = await open();
    const arts = await s.articles.insert([article('one'), article('two'), article('three')], T0);
    expect(await s.vectors.queueLength()).toBe(3);
    const batch = await s.vectors.nextBatch(2);
    expect(batch).toEqual([
      { id: arts[0]!.id, content: 'one' },
      { id: arts[1]!.id, content: 'two' },
    ]);
    await s.vectors.storeVectors('m1', [{ id: arts[0]!.id, vector: Float32Array.from([1, 0.5, -2]) }]);
    expect(await s.vectors.queueLength()).toBe(2);
    // A refused article moves to the back of the queue.
    expect(await s.vectors.deferEmbedding([arts[1]!.id], T0 + 1000, 2)).toEqual([]);
    expect((await s.vectors.nextBatch(5, 0)).map((b) => b.content)).toEqual(['three', 'two']);
    expect(await s.vectors.deferEmbedding([arts[1]!.id, 'missing'], T0 + 2000, 2)).toEqual([arts[1]!.id]);
    expect(await s.vectors.queueLength()).toBe(1);
    // A model change queues every article without a vector of that model.
    await s.vectors.storeVectors('m1', [{ id: arts[2]!.id, vector: Float32Array.from([3, 3, 3]) }]);
    expect(await s.vectors.queueLength()).toBe(0);
    expect(await s.vectors.enqueueMissing('m1')).toBe(1); // the dropped one
    expect(await s.vectors.enqueueMissing('m1')).toBe(0);
    expect(await s.vectors.enqueueMissing('m2')).toBe(2);
    expect(await s.vectors.queueLength()).toBe(3);
  });

  test(`embedding queue leases: ${h.leases ? 'a leased row is handed out once until its lease expires' : 'ignored by this engine (one service process)'}`, async () => {
    const s = await open();
    const p = await peer(s);
    await s.articles.insert([article('one'), article('two'), article('three')], T0);
    const a = await s.vectors.nextBatch(2, 60_000);
    const b = await p.vectors.nextBatch(2, 60_000);
    if (!h.leases) {
      expect(b.map((x) => x.content)).toEqual(['one', 'two']);
      return;
    }
    expect(a.map((x) => x.content)).toEqual(['one', 'two']);
    expect(b.map((x) => x.content)).toEqual(['three']);
    expect(await s.vectors.nextBatch(5)).toEqual([]);
    expect(await s.vectors.queueLength()).toBe(3);
    // An expired lease (its worker died) is taken again.
    const short = await p.vectors.nextBatch(1, 0);
    expect(short).toEqual([]);
    await s.vectors.deferEmbedding([a[0]!.id], T0, 5); // ends that lease: back in the queue
    const again = await p.vectors.nextBatch(5, 1);
    expect(again.map((x) => x.content)).toEqual(['one']);
    // Its 1 ms lease runs out on the store's own clock: then another worker takes it.
    let taken: { content: string }[] = [];
    await until(async () => (taken = await s.vectors.nextBatch(5, 60_000)).length > 0, 'the 1 ms lease to run out');
    expect(taken.map((x) => x.content)).toEqual(['one']);
  });

  test('vectorsAfter: by increasing rowid, values exact, a replaced vector comes again under a newer rowid', async () => {
    const s = await open();
    const arts = await s.articles.insert([article('a'), article('b')], T0);
    const va = Float32Array.from({ length: 384 }, (_, i) => Math.sin(i) * 1e-3);
    await s.vectors.storeVectors('m', [
      { id: arts[0]!.id, vector: va },
      { id: arts[1]!.id, vector: Float32Array.from([2, 4]) },
    ]);
    await s.vectors.storeVectors('other', [{ id: arts[0]!.id, vector: Float32Array.from([9]) }]);
    const all = await s.vectors.vectorsAfter('m', 0);
    expect(all.map((v) => v.id)).toEqual([arts[0]!.id, arts[1]!.id]);
    expect(all[0]!.vector).toEqual(va);
    expect(all[1]!.rowid).toBeGreaterThan(all[0]!.rowid);
    expect(await s.vectors.vectorsAfter('m', all[1]!.rowid)).toEqual([]);
    await s.vectors.storeVectors('m', [{ id: arts[0]!.id, vector: Float32Array.from([7, 7]) }]);
    const fresh = await s.vectors.vectorsAfter('m', all[1]!.rowid);
    expect(fresh.map((v) => [v.id, Array.from(v.vector)])).toEqual([[arts[0]!.id, [7, 7]]]);
    expect(await s.vectors.vectorsAfter('m', 0)).toHaveLength(2);
    expect(await s.vectors.vectorsAfter('nope', 0)).toEqual([]);
  });

  test('lexicalSearch: every ingestion path fills the keyword index in its transaction; the article naming the company, figure or rare word ranks first', async () => {
    const s = await open();
    await s.articles.insert(
      [
        article('Brent crude falls 3% as OPEC+ signals higher output'),
        article('Nvidia revenue triples to $22.1 billion on data center demand'),
      ],
      T0,
    );
    await s.articles.insert([article('AMD revenue rises 10% as data center chips offset PC slump')], T0 + 1);
    await s.sources.ingestItems(
      [
        {
          source: 'wire',
          externalId: 'x-1',
          canonicalUrl: null,
          article: article('Maersk pauses Red Sea shipping after Houthi attacks', { source: 'wire' }),
          nearKeys: [],
        },
      ],
      T0 + 2,
    );
    // A write rolled back leaves nothing in the index.
    await expect(
      s.transaction(async (tx) => {
        await tx.articles.insert([article('Houthi rollback never committed')], T0 + 3);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const first = async (q: string) =>
      (await s.articles.getMany((await s.vectors.lexicalSearch(q, 10)).map((h) => h.id))).map((a) => a.content);
    expect((await first('Nvidia data center revenue'))[0]).toMatch(/^Nvidia/);
    expect((await first('AMD data center'))[0]).toMatch(/^AMD/);
    expect(await first('Houthi attacks')).toEqual(['Maersk pauses Red Sea shipping after Houthi attacks']);
    // Stemmed: "signal" finds "signals"; scores are positive, best first.
    const hits = await s.vectors.lexicalSearch('OPEC signal', 10);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.score).toBeGreaterThan(0);
    expect(await s.vectors.lexicalSearch('nothing matches zyzzyva', 10)).toEqual([]);
    expect(await s.vectors.lexicalSearch('revenue', 1)).toHaveLength(1);
  });

  test('lexicalSearch: any query text is safe (quoted terms), stop-words or punctuation only give no keyword hits', async () => {
    const s = await open();
    await s.articles.insert(
      [article('Gold slips as dollar strengthens'), article("Fed's Powell: no hurry to cut")],
      T0,
    );
    for (const q of [
      'the of and to',
      '?!..,;',
      '',
      '"',
      "'",
      '\\',
      'a* OR -b:c NEAR(x y) ^z',
      "gold & !oil | 'x' :*",
      'AND OR NOT',
      '日本銀行 📈',
      'x'.repeat(500),
    ]) {
      const hits = await s.vectors.lexicalSearch(q, 5);
      expect(Array.isArray(hits), q).toBe(true);
    }
    expect(await s.vectors.lexicalSearch('the of and to', 5)).toEqual([]);
    expect((await s.vectors.lexicalSearch('gold & !oil', 5)).length).toBe(1);
    expect((await s.vectors.lexicalSearch("Powell's", 5)).length).toBe(1);
  });

  test('vectorsAfter with a limit: pages in rowid order that together give every vector once', async () => {
    const s = await open();
    const arts = await s.articles.insert(
      ['a', 'b', 'c', 'd', 'e'].map((x) => article(x)),
      T0,
    );
    await s.vectors.storeVectors(
      'm',
      arts.map((a, i) => ({ id: a.id, vector: Float32Array.from([i, i]) })),
    );
    const pages: { rowid: number; id: string }[][] = [];
    for (let after = 0; ;) {
      const page = await s.vectors.vectorsAfter('m', after, 2);
      pages.push(page);
      if (page.length < 2) break;
      after = page[page.length - 1]!.rowid;
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((v) => v.id)).toEqual(arts.map((a) => a.id));
    expect(pages.flat().map((v) => v.rowid)).toEqual([...pages.flat().map((v) => v.rowid)].sort((x, y) => x - y));
    expect(await s.vectors.vectorsAfter('m', 0, 100)).toHaveLength(5);
  });

  test('transaction: all or nothing; a transaction inside one joins it; ping answers', async () => {
    const s = await open();
    await s.ping();
    await expect(
      s.transaction(async (tx) => {
        const acct = await tx.accounts.createAccount('pro', T0, 'acct_rolled_back');
        await tx.accounts.createKey(acct.id, 'hash-rb', 'key_rb', T0);
        await tx.articles.insert([article('rolled back')], () => T0);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await s.accounts.getAccount('acct_rolled_back')).toBeUndefined();
    expect(await s.accounts.findKey('hash-rb')).toBeUndefined();
    expect(await s.articles.count()).toBe(0);
    expect(await s.vectors.queueLength()).toBe(0);

    const result = await s.transaction(async (tx) => {
      const acct = await tx.accounts.createAccount('starter', T0, 'acct_kept');
      await tx.transaction((inner) => inner.accounts.createKey(acct.id, 'hash-kept', 'key_kept', T0));
      await tx.articles.insert([article('kept')], () => T0);
      expect(await tx.accounts.getAccount('acct_kept')).toBeDefined(); // reads its own writes
      return 42;
    });
    expect(result).toBe(42);
    expect(await s.accounts.findKey('hash-kept')).toEqual({ keyId: 'key_kept', accountId: 'acct_kept', active: true });
    const p = await peer(s);
    expect(await p.articles.count()).toBe(1);
  });

  registerStoreTests(`store ports: ${name}`, tests, h, () => opened.closeAll());
  return tests.length;
}

function engineName(s: Store): string {
  return s.constructor.name === 'SqliteStore' ? 'sqlite' : 'postgres';
}
