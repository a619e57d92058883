import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddingUnavailableError } from '../../src/search/embedder.js';
import { Bm25, mean, parseEvalSet, recallAtK } from '../../scripts/lib/evaluate-search.js';
import { createLocalEmbedder } from '../../src/search/local.js';
import { cosineTopK } from '../../src/search/rank.js';

// The model loads in worker threads (~0.5-1.5 s each); machines are shared, so timeouts are generous.
const SLOW = { timeout: 120_000 };
const embedder = createLocalEmbedder();
afterAll(() => embedder.close());

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('the local embedder runs all-MiniLM-L6-v2 offline from node_modules', () => {
  it('names its model and returns one 384-d unit Float32Array per text', SLOW, async () => {
    expect(embedder.modelId).toBe('local:all-MiniLM-L6-v2');
    const out = await embedder.embed(['Fed raises interest rates', 'Apple unveils new iPhone']);
    expect(out).toHaveLength(2);
    for (const v of out) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(384);
      expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
    }
  });

  it('scores a paraphrase clearly above an unrelated headline', SLOW, async () => {
    const [q, para, other] = await embedder.embed([
      'Fed raises interest rates',
      'FOMC hikes benchmark rate by 25 basis points',
      'Apple unveils new iPhone',
    ]);
    expect(dot(q!, para!)).toBeGreaterThan(dot(q!, other!) + 0.15);
  });

  it('gives each text the same vector in a batch (split across workers) as alone, in input order', SLOW, async () => {
    const texts = Array.from({ length: 20 }, (_, i) => `Company ${i} beats quarterly estimates by ${i + 1} cents`);
    const batch = await embedder.embed(texts);
    const alone = await Promise.all(texts.map((t) => embedder.embed([t]))); // concurrent calls, too
    batch.forEach((v, i) => {
      expect(Array.from(v)).toEqual(Array.from(alone[i]![0]!));
      if (i > 0) expect(dot(v, batch[i - 1]!)).toBeLessThan(0.9999); // the texts really differ
    });
  });

  it('returns nothing for no texts', async () => {
    expect(await embedder.embed([])).toEqual([]);
  });
});

describe('the local embedder fails with EmbeddingUnavailableError once closed', () => {
  it('rejects an embed in flight when closed, and any embed after', SLOW, async () => {
    const own = createLocalEmbedder({ maxThreads: 1 });
    const inFlight = own.embed(Array.from({ length: 40 }, (_, i) => `headline ${i}`)).catch((e: unknown) => e);
    await own.close();
    expect(await inFlight).toBeInstanceOf(EmbeddingUnavailableError);
    await expect(own.embed(['x'])).rejects.toBeInstanceOf(EmbeddingUnavailableError);
  });
});

describe('the local embedder turns a broken worker into EmbeddingUnavailableError', () => {
  const flaky = new URL('./workers/flaky.mjs', import.meta.url);

  it.each(['exit', 'throw', 'error', 'short'])('a worker that answers "%s"', SLOW, async (how) => {
    const own = createLocalEmbedder({ workerUrl: flaky, maxThreads: 1 });
    try {
      await expect(own.embed(['fine', how])).rejects.toBeInstanceOf(EmbeddingUnavailableError);
      // The pool recovers: the next call is served (by a fresh worker when the old one died).
      const [v] = await own.embed(['fine']);
      expect(v![0]).toBeCloseTo(1, 6);
    } finally {
      await own.close();
    }
  });

  it('a worker that cannot start', SLOW, async () => {
    const own = createLocalEmbedder({ workerUrl: new URL('./workers/fails-to-start.mjs', import.meta.url) });
    try {
      await expect(own.embed(['x'])).rejects.toThrow(/cannot load the engine/);
      await expect(own.embed(['x'])).rejects.toBeInstanceOf(EmbeddingUnavailableError);
    } finally {
      await own.close();
    }
  });
});

describe('the local embedder serves calls round-robin', () => {
  it('answers a query sent during a bulk call before the bulk call ends', SLOW, async () => {
    const own = createLocalEmbedder({ maxThreads: 1, chunkSize: 2 });
    try {
      // Both workers loaded first (a two-text call takes the bulk worker, the one-text call beside it the query
      // lane): the race is the query against the bulk call, not against a model load (seconds under load).
      await Promise.all([own.embed(['warm the bulk worker up', 'with two texts']), own.embed(['and the query lane'])]);
      const done: string[] = [];
      const bulk = own
        .embed(Array.from({ length: 30 }, (_, i) => `Headline number ${i} about markets`))
        .then(() => done.push('bulk'));
      const query = own.embed(['Fed raises interest rates']).then(() => done.push('query'));
      await Promise.all([bulk, query]);
      expect(done).toEqual(['query', 'bulk']);
    } finally {
      await own.close();
    }
  });
});

describe('the query lane: a one-text call never waits for a bulk chunk in flight', () => {
  it(
    'a query sent while the only bulk worker embeds one long chunk is answered before that chunk ends',
    SLOW,
    async () => {
      // One bulk worker, one chunk of 40 texts (well over a second): without the lane the query would wait for all of
      // it.
      // Both workers answer one text first, so the race below is the lane against the chunk, not against the
      // lane's model load (a few seconds when another process takes the cores).
      const own = createLocalEmbedder({ maxThreads: 1, chunkSize: 40, maxQueries: 2 });
      try {
        await Promise.all([own.embed(['warm the bulk worker up']), own.embed(['and the query lane'])]);
        const done: string[] = [];
        const bulk = own
          .embed(Array.from({ length: 40 }, (_, i) => `Headline number ${i} about markets and rates`))
          .then(() => done.push('bulk'));
        const query = own.embed(['Fed raises interest rates']).then(() => done.push('query'));
        await Promise.all([bulk, query]);
        expect(done).toEqual(['query', 'bulk']);
      } finally {
        await own.close();
      }
    },
  );
});

describe('the local embedder rejects nonsensical options', () => {
  it.each([{ maxThreads: 0 }, { maxThreads: 1.5 }, { chunkSize: 0 }])('%o', (options) => {
    expect(() => createLocalEmbedder(options)).toThrow(RangeError);
  });
});

describe('on the labelled set, embedding search finds more than keyword search (BM25)', () => {
  it('has a greater mean recall@5 than BM25, and at least 0.5', SLOW, async () => {
    const set = parseEvalSet(
      JSON.parse(readFileSync(new URL('../fixtures/search-eval.json', import.meta.url), 'utf8')),
    );
    const vectors = await embedder.embed(set.headlines.map((h) => h.text));
    const corpus = set.headlines.map((h, i) => ({ id: h.id, vector: vectors[i]! }));
    const queryVectors = await embedder.embed(set.queries.map((q) => q.text));
    const bm25 = new Bm25(set.headlines);
    const emb: number[] = [];
    const kw: number[] = [];
    set.queries.forEach((q, i) => {
      emb.push(
        recallAtK(
          cosineTopK(queryVectors[i]!, corpus, 5).map((h) => h.id),
          q.relevant,
          5,
        ),
      );
      kw.push(
        recallAtK(
          bm25.topK(q.text, 5).map((h) => h.id),
          q.relevant,
          5,
        ),
      );
    });
    const [embMean, kwMean] = [mean(emb), mean(kw)];
    expect(kwMean).toBeGreaterThan(0); // the baseline works: some queries do share words
    expect(embMean).toBeGreaterThan(kwMean);
    expect(embMean).toBeGreaterThanOrEqual(0.5);
  });
});
