/** The embedding queue lives in the store: it survives a restart, and vectors are tied to their model. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddingWorker, SemanticIndex } from '../../src/indexing/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { TrigramEmbedder } from '../support/service.js';

const dirs: string[] = [];
function file(): string {
  const d = mkdtempSync(join(tmpdir(), 'fns-queue-'));
  dirs.push(d);
  return join(d, 'fns.sqlite');
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const article = (content: string) => ({ content, urgency: 'regular' as const, sentiment: null, published_at: null, tickers: [] });

describe('embedding queue', () => {
  it('keeps queued articles across a restart and embeds them afterwards', async () => {
    const f = file();
    const first = new SqliteStore(f);
    await first.insert([article('Fed raises rates'), article('Oil prices jump')], Date.now());
    expect(await first.queueLength()).toBe(2);
    first.close(); // the service stops before the worker ran

    const second = new SqliteStore(f);
    const embedder = new TrigramEmbedder();
    expect(await second.queueLength()).toBe(2);
    expect(await new EmbeddingWorker(second, embedder).drain()).toBe(2);
    expect(await second.queueLength()).toBe(0);
    const hits = await new SemanticIndex(second, embedder).search('oil prices', 1);
    expect(hits.map((a) => a.content)).toEqual(['Oil prices jump']);
    second.close();
  });

  it('lists and streams an article at once, and makes it searchable once its vector is stored', async () => {
    const store = new SqliteStore(file());
    const embedder = new TrigramEmbedder();
    const index = new SemanticIndex(store, embedder);
    await store.insert([article('Copper hits record')], Date.now());
    expect((await store.list({ afterMs: 0, limit: 10 })).length).toBe(1);
    expect(await index.search('copper record', 5)).toEqual([]);
    await new EmbeddingWorker(store, embedder).runOnce();
    expect((await index.search('copper record', 5)).map((a) => a.content)).toEqual(['Copper hits record']);
    store.close();
  });

  it('re-queues the archive for a new model and never mixes vectors of two models', async () => {
    const store = new SqliteStore(file());
    const oldModel = new TrigramEmbedder();
    await store.insert([article('Gold slips'), article('Yen strengthens')], Date.now());
    await new EmbeddingWorker(store, oldModel).drain();

    const newModel = Object.assign(new TrigramEmbedder(), { modelId: 'test:other-model' });
    const worker = new EmbeddingWorker(store, newModel);
    expect(await store.enqueueMissing(newModel.modelId)).toBe(2);
    expect(await new SemanticIndex(store, newModel).search('gold', 5)).toEqual([]);
    await worker.drain();
    expect((await new SemanticIndex(store, newModel).search('gold slips', 1)).map((a) => a.content)).toEqual(['Gold slips']);
    expect(await store.enqueueMissing(oldModel.modelId)).toBe(0);
    store.close();
  });
});
