/**
 * Semantic search over the archive: articles are embedded after ingestion, in batches, off the path
 * that stores and publishes them (EmbeddingWorker); the SemanticIndex keeps every vector of the
 * current model in memory and ranks exactly (brute force). The queue lives in the store, so it
 * survives a restart; vectors carry their model id, and a model change re-queues the archive.
 */
import { cosineTopK, type Embedder } from '../search/index.js';
import type { StoredArticle } from '../domain/articles.js';
import type { ArticleStore, VectorStore } from '../store/ports.js';

export class SemanticIndex {
  private readonly ids: string[] = [];
  private readonly vectors: Float32Array[] = [];
  private lastRowid = 0;

  constructor(
    private readonly store: ArticleStore & VectorStore,
    private readonly embedder: Embedder,
  ) {}

  get size(): number {
    return this.ids.length;
  }

  /** Loads vectors stored since the last refresh (by this or any other process). */
  async refresh(): Promise<void> {
    const fresh = await this.store.vectorsAfter(this.embedder.modelId, this.lastRowid);
    for (const v of fresh) {
      this.ids.push(v.id);
      this.vectors.push(v.vector);
      this.lastRowid = v.rowid;
    }
  }

  async search(query: string, limit: number): Promise<StoredArticle[]> {
    const [q] = await this.embedder.embed([query]);
    await this.refresh();
    const ids = this.ids;
    const vectors = this.vectors;
    const candidates = { *[Symbol.iterator]() { for (let i = 0; i < ids.length; i++) yield { id: ids[i]!, vector: vectors[i]! }; } };
    const top = cosineTopK(q!, candidates, limit);
    return this.store.getMany(top.map((t) => t.id));
  }
}

export interface WorkerOptions {
  batchSize?: number;
  idleMs?: number;
  /** Backoff after a failed batch. */
  retryMs?: number;
  log?: (message: string) => void;
}

/** Drains the embedding queue in batches until stopped. */
export class EmbeddingWorker {
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;

  constructor(
    private readonly store: VectorStore,
    private readonly embedder: Embedder,
    private readonly options: WorkerOptions = {},
  ) {}

  /** Embeds one batch; returns how many articles it stored. */
  async runOnce(): Promise<number> {
    const batch = await this.store.nextBatch(this.options.batchSize ?? 32);
    if (batch.length === 0) return 0;
    const vectors = await this.embedder.embed(batch.map((b) => b.content));
    await this.store.storeVectors(
      this.embedder.modelId,
      batch.map((b, i) => ({ id: b.id, vector: vectors[i]! })),
    );
    return batch.length;
  }

  /** Runs until the queue is empty. */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  async start(): Promise<void> {
    const queued = await this.store.enqueueMissing(this.embedder.modelId);
    if (queued > 0) this.options.log?.(`embedding: ${queued} article(s) queued for model ${this.embedder.modelId}`);
    this.running = true;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.current = this.tick().finally(() => (this.current = undefined));
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      const n = await this.runOnce();
      this.schedule(n > 0 ? 0 : (this.options.idleMs ?? 500));
    } catch (err) {
      this.options.log?.(`embedding: batch failed (${(err as Error).message}); retrying`);
      this.schedule(this.options.retryMs ?? 5000);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.current;
  }
}
