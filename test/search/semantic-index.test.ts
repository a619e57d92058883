import type { AddressInfo } from 'node:net';
import { lineLog } from '../../src/domain/log.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits, problems } from '../../src/contract/index.js';
import { createApp } from '../../src/http/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { isDependencyUnavailable } from '../../src/http/unavailable.js';
import { SearchIndexLoadingError, SemanticIndex } from '../../src/indexing/index.js';
import type { Embedder } from '../../src/search/index.js';
import { rankMatrix } from '../../src/search/rank.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../../src/state/memory.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { createKey } from '../../src/cli/operator.js';
import { TrigramEmbedder } from '../support/service.js';
import { asIndexStore, clusteredUnitVectors, idOf, MatrixVectorStore, randomUnitVectors } from './corpus.js';

/** The recall goal: the approximate index must find at least this share of the exact top 10. */
const RECALL_GOAL = 0.95;

/** An embedder whose "query" is a vector chosen by the test (the text is a row of `queries`). */
function vectorEmbedder(model: string, queries: Float32Array, dim: number): Embedder {
  return { modelId: model, embed: async ([t]) => [queries.slice(Number(t) * dim, (Number(t) + 1) * dim)] };
}

describe('past the threshold, the approximate index finds >= 95% of the exact top 10 (seeded corpus)', () => {
  const dim = 384;
  const n = 8_000;
  const queryCount = 100;
  // Topics, as text embeddings have; queries near the corpus (a perturbed stored vector), as searches are.
  const data = clusteredUnitVectors(n, dim, 2024);
  const queries = new Float32Array(queryCount * dim);
  const noise = randomUnitVectors(queryCount, dim, 77);
  for (let q = 0; q < queryCount; q++) {
    const r = (q * 97) % n;
    let s = 0;
    for (let i = 0; i < dim; i++) s += (queries[q * dim + i] = data[r * dim + i]! + 0.5 * noise[q * dim + i]!) ** 2;
    for (let i = 0; i < dim; i++) queries[q * dim + i]! /= Math.sqrt(s);
  }
  let index: SemanticIndex;
  beforeAll(async () => {
    const store = new MatrixVectorStore('m', data, dim);
    // A low threshold: loaded into the matrix, then moved into an HNSW graph.
    index = new SemanticIndex(asIndexStore(store), vectorEmbedder('m', queries, dim), {
      annThreshold: 3_000,
      pageSize: 1_000,
      buildThreads: 2,
    });
    await index.start();
    // Ready (exact) once loaded; the graph is built in the background, then takes over.
    await index.settled();
  }, 120_000);
  afterAll(() => index.close());

  it('switched to the approximate index and holds every vector', () => {
    expect(index.status()).toMatchObject({ state: 'ready', mode: 'approximate', vectors: n });
  });

  it('recall@10 against exact ranking of the same data', async () => {
    let hits = 0;
    for (let q = 0; q < queryCount; q++) {
      const exact = await rankMatrix(data, dim, n, queries.subarray(q * dim, (q + 1) * dim), 10, idOf);
      const got = await index.search(String(q), 10);
      const want = new Set(exact.map((e) => idOf(e.row)));
      hits += got.filter((a) => want.has(a.id)).length;
      expect(got).toHaveLength(10);
    }
    expect(hits / (queryCount * 10)).toBeGreaterThanOrEqual(RECALL_GOAL);
  });
});

describe('a vector stored again replaces the old one, in either index', () => {
  it.each([
    ['exact', 1_000_000],
    ['approximate', 100],
  ])('%s', async (mode, annThreshold) => {
    const dim = 32;
    const n = 400;
    const data = randomUnitVectors(n, dim, 5);
    const target = randomUnitVectors(1, dim, 6);
    // Rows 0..n-1, then row 7's article again with the target vector (a newer rowid).
    const store = new MatrixVectorStore('m', data, dim);
    const index = new SemanticIndex(asIndexStore(store), vectorEmbedder('m', target, dim), { annThreshold });
    await index.start();
    await index.settled();
    expect(index.status().mode).toBe(mode);
    const original = store.vectorsAfter.bind(store);
    store.vectorsAfter = async (model, after, limit) =>
      after >= n ? (after === n ? [{ rowid: n + 1, id: idOf(7), vector: target }] : []) : original(model, after, limit);
    const [top] = await index.search('0', 1);
    expect(top!.id).toBe(idOf(7));
    expect(index.size).toBe(n);
    index.close();
  });
});

describe('the index loads in the background; until it is ready, search is refused as unavailable', () => {
  it('refuses search while loading (a 503 problem for the HTTP layer), answers once ready', async () => {
    const dim = 8;
    const data = randomUnitVectors(50, dim, 9);
    const store = new MatrixVectorStore('m', data, dim);
    let open!: () => void;
    store.gate = new Promise<void>((r) => (open = r));
    const index = new SemanticIndex(asIndexStore(store), vectorEmbedder('m', data, dim), { pageSize: 10 });
    const ready = index.start();
    expect(index.ready).toBe(false);
    const refused = await index.search('3', 5).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SearchIndexLoadingError);
    expect(isDependencyUnavailable(refused)).toBe(true);
    expect(index.status()).toMatchObject({ state: 'loading' });
    open();
    await ready;
    expect(index.status()).toMatchObject({ state: 'ready', vectors: 50, mode: 'exact' });
    expect((await index.search('3', 1))[0]!.id).toBe(idOf(3));
    // Paged: 50 vectors in pages of 10, then the empty page that ends the load.
    expect(store.calls).toBeGreaterThanOrEqual(5);
  });

  it('retries a failed load (database not reachable yet) and says why in its status meanwhile', async () => {
    const dim = 8;
    const data = randomUnitVectors(20, dim, 10);
    const store = new MatrixVectorStore('m', data, dim);
    store.failFirst = 2;
    const logs: string[] = [];
    // The status as it is when each failed attempt is logged.
    const meanwhile: ReturnType<SemanticIndex['status']>[] = [];
    const index: SemanticIndex = new SemanticIndex(asIndexStore(store), vectorEmbedder('m', data, dim), {
      retryMs: 5,
      log: lineLog((m) => {
        logs.push(m);
        meanwhile.push(index.status());
      }),
    });
    const ready = index.start();
    expect(index.status().state).toBe('loading');
    await ready;
    expect(meanwhile.slice(0, 2)).toEqual(
      [0, 1].map(() => ({
        state: 'loading',
        vectors: 0,
        mode: 'exact',
        error: expect.stringMatching(/database unreachable/),
      })),
    );
    expect(index.status()).toMatchObject({ state: 'ready', vectors: 20 });
    expect(index.status().error).toBeUndefined();
    expect(logs.filter((l) => /loading the index failed; retrying .*database unreachable/.test(l))).toHaveLength(2);
    expect(logs.at(-1)).toMatch(/index ready \{"vectors":20,"mode":"exact"/);
  });

  it('without start(), the first search loads the index and waits for it (tools, tests)', async () => {
    const dim = 8;
    const data = randomUnitVectors(30, dim, 11);
    const index = new SemanticIndex(
      asIndexStore(new MatrixVectorStore('m', data, dim)),
      vectorEmbedder('m', data, dim),
    );
    expect((await index.search('12', 1))[0]!.id).toBe(idOf(12));
  });
});

describe('the service answers at once while the index loads; search is the contract 503 until ready', () => {
  const store = new SqliteStore(':memory:');
  const embedder = new TrigramEmbedder();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const gated = new Proxy(store.vectors, {
    get(target, prop, receiver) {
      if (prop === 'vectorsAfter')
        return async (...args: Parameters<SqliteStore['vectors']['vectorsAfter']>) => (
          await gate,
          target.vectorsAfter(...args)
        );
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const index = new SemanticIndex({ articles: store.articles, vectors: gated }, embedder);
  let url: string;
  let key: string;
  let server: ReturnType<typeof createHttpServer>;
  beforeAll(async () => {
    const now = Date.now();
    const [a] = await store.articles.insert(
      [{ content: 'Copper hits a record high', urgency: 'regular', sentiment: null, published_at: null, tickers: [] }],
      now,
    );
    const [v] = await embedder.embed([a!.content]);
    await store.vectors.storeVectors(embedder.modelId, [{ id: a!.id, vector: v! }]);
    key = (await createKey(store.accounts, { tier: 'max', livePrefix: limits.keyPrefixes.live, now })).key;
    server = createHttpServer(
      createApp({
        accounts: store.accounts,
        articles: store.articles,
        changes: store.changes,
        search: index,
        rateLimiter: new MemoryRateLimiter(),
        ipGuard: new MemoryIpGuard(limits.ipGuard),
        livePrefix: limits.keyPrefixes.live,
        clock: Date.now,
        trustProxy: false,
        validateResponses: true,
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    index.close();
    open();
    await new Promise((r) => server.close(r));
    store.close();
  });

  it('list 200 and search 503 serviceUnavailable with Retry-After while loading; search 200 once ready', async () => {
    const ready = index.start();
    const headers = { 'X-API-Key': key };
    const list = await fetch(`${url}/v1/news?limit=5`, { headers });
    expect(list.status).toBe(200);
    expect((await list.json()).count).toBe(1);
    const search = await fetch(`${url}/v1/news/search?q=copper`, { headers });
    expect(search.status).toBe(503);
    expect(search.headers.get('retry-after')).toBe(String(limits.unavailableRetryAfterSeconds));
    expect(await search.json()).toEqual(problems.serviceUnavailable);
    open();
    await ready;
    const after = await fetch(`${url}/v1/news/search?q=copper`, { headers });
    expect(after.status).toBe(200);
    expect((await after.json()).articles.map((a: { content: string }) => a.content)).toEqual([
      'Copper hits a record high',
    ]);
  });
});

describe('recent query vectors are kept (LRU): a repeated or paged query skips the model', () => {
  it('embeds a query once while it is among the last queryCacheSize queries', async () => {
    const dim = 8;
    const data = randomUnitVectors(50, dim, 3);
    const store = new MatrixVectorStore('m', data, dim);
    const asked: string[] = [];
    const embedder: Embedder = {
      modelId: 'm',
      embed: async ([t]) => {
        asked.push(t!);
        return [data.slice(0, dim)];
      },
    };
    const index = new SemanticIndex(asIndexStore(store), embedder, { queryCacheSize: 2 });
    await index.search('a', 5);
    await index.search('a', 5, { offset: 5 });
    await index.search('b', 5);
    await index.search('a', 5); // a is the most recent again; b is the least recent
    await index.search('c', 5); // evicts b
    await index.search('a', 5);
    await index.search('b', 5);
    expect(asked).toEqual(['a', 'b', 'c', 'b']);
    await index.close();
  });
});
