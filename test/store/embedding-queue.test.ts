/** The embedding queue lives in the store: it survives a restart, and vectors are tied to their model. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddingWorker, SemanticIndex } from '../../src/indexing/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { TrigramEmbedder } from '../support/service.js';
import { recordLog } from '../support/log.js';

const dirs: string[] = [];
function file(): string {
  const d = mkdtempSync(join(tmpdir(), 'fns-queue-'));
  dirs.push(d);
  return join(d, 'fns.sqlite');
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const article = (content: string) => ({
  content,
  urgency: 'regular' as const,
  sentiment: null,
  published_at: null,
  tickers: [],
});

describe('embedding queue', () => {
  it("reads the next batch in the queue's order from its index, without sorting the whole queue", async () => {
    const store = new SqliteStore(file());
    try {
      await store.articles.insert([article('Fed raises rates'), article('Oil prices jump')], Date.now());
      const plan = store.vectors.explainNextBatch().join('\n');
      expect(plan).toContain('embed_queue_order');
      expect(plan).not.toContain('TEMP B-TREE');
      expect((await store.vectors.nextBatch(5)).map((b) => b.content)).toEqual(['Fed raises rates', 'Oil prices jump']);
    } finally {
      await store.close();
    }
  });

  it('keeps queued articles across a restart and embeds them afterwards', async () => {
    const f = file();
    const first = new SqliteStore(f);
    await first.articles.insert([article('Fed raises rates'), article('Oil prices jump')], Date.now());
    expect(await first.vectors.queueLength()).toBe(2);
    first.close(); // the service stops before the worker ran

    const second = new SqliteStore(f);
    const embedder = new TrigramEmbedder();
    expect(await second.vectors.queueLength()).toBe(2);
    expect(await new EmbeddingWorker(second.vectors, embedder).drain()).toBe(2);
    expect(await second.vectors.queueLength()).toBe(0);
    const hits = await new SemanticIndex(second, embedder).search('oil prices', 1);
    expect(hits.map((a) => a.content)).toEqual(['Oil prices jump']);
    second.close();
  });

  it('lists and streams an article at once, and makes it searchable once its vector is stored', async () => {
    const store = new SqliteStore(file());
    const embedder = new TrigramEmbedder();
    const index = new SemanticIndex(store, embedder);
    await store.articles.insert([article('Copper hits record')], Date.now());
    expect((await store.articles.list({ afterMs: 0, limit: 10 })).length).toBe(1);
    expect(await index.search('copper record', 5)).toEqual([]);
    await new EmbeddingWorker(store.vectors, embedder).runOnce();
    expect((await index.search('copper record', 5)).map((a) => a.content)).toEqual(['Copper hits record']);
    store.close();
  });

  it('re-queues the archive for a new model and never mixes vectors of two models', async () => {
    const store = new SqliteStore(file());
    const oldModel = new TrigramEmbedder();
    await store.articles.insert([article('Gold slips'), article('Yen strengthens')], Date.now());
    await new EmbeddingWorker(store.vectors, oldModel).drain();

    const newModel = Object.assign(new TrigramEmbedder(), { modelId: 'test:other-model' });
    const worker = new EmbeddingWorker(store.vectors, newModel);
    expect(await store.vectors.enqueueMissing(newModel.modelId)).toBe(2);
    expect(await new SemanticIndex(store, newModel).search('gold', 5)).toEqual([]);
    await worker.drain();
    expect((await new SemanticIndex(store, newModel).search('gold slips', 1)).map((a) => a.content)).toEqual([
      'Gold slips',
    ]);
    expect(await store.vectors.enqueueMissing(oldModel.modelId)).toBe(0);
    store.close();
  });

  it('defers an article the embedder refuses, stores the others, and drops it after 5 attempts', async () => {
    const store = new SqliteStore(file());
    const embedder = new TrigramEmbedder();
    const picky = {
      modelId: embedder.modelId,
      embed: async (texts: string[]) => {
        if (texts.some((t) => t.startsWith('poison'))) throw new Error('input rejected');
        return embedder.embed(texts);
      },
    };
    const logs: string[] = [];
    const worker = new EmbeddingWorker(store.vectors, picky, { log: recordLog(logs) });
    await store.articles.insert(
      [article('poison pill'), article('Gold slips'), article('Yen strengthens')],
      Date.now(),
    );
    expect(await worker.runOnce()).toBe(2); // attempt 1 for the refused article
    expect(await store.vectors.queueLength()).toBe(1);
    // Alone in a batch, a refusal cannot be told from an outage: back off, no attempt charged.
    await expect(worker.runOnce()).rejects.toThrow('input rejected');
    for (let attempt = 2; attempt <= 5; attempt++) {
      expect(await store.vectors.queueLength()).toBe(1);
      await store.articles.insert([article(`Fresh headline ${attempt}`)], Date.now() + attempt);
      expect(await worker.runOnce()).toBe(1); // the newer article is never stuck behind it
    }
    expect(await store.vectors.queueLength()).toBe(0);
    expect(logs.some((l) => /article dropped from embedding.*"attempts":5/.test(l))).toBe(true);
    store.close();
  });

  it('charges no attempt when the embedder is down for every article', async () => {
    const store = new SqliteStore(file());
    const down = new TrigramEmbedder();
    down.failing = true;
    await store.articles.insert([article('a one'), article('b two')], Date.now());
    const worker = new EmbeddingWorker(store.vectors, down);
    for (let i = 0; i < 7; i++) await expect(worker.runOnce()).rejects.toThrow();
    down.failing = false;
    expect(await worker.drain()).toBe(2);
  });

  it('never returns an article twice when searches refresh the index concurrently', async () => {
    const store = new SqliteStore(file());
    const embedder = new TrigramEmbedder();
    await store.articles.insert([article('alpha news'), article('beta news')], Date.now());
    await new EmbeddingWorker(store.vectors, embedder).drain();
    const index = new SemanticIndex(store, embedder);
    const results = await Promise.all([index.search('news', 10), index.search('news', 10), index.search('news', 10)]);
    for (const r of results) expect(r.map((a) => a.content).sort()).toEqual(['alpha news', 'beta news']);
    expect(index.size).toBe(2);
    store.close();
  });
});
