/**
 * Embeds articles after ingestion, in batches, from a queue in the store: it survives restarts, instances share it by
 * lease.
 */
import type { Log } from '../domain/log.js';
import type { Embedder } from '../search/index.js';
import { isStoreBusy } from '../store/ports/errors.js';
import type { VectorStore } from '../store/ports/index.js';
import type { StoredVector } from './vector-index.js';

/** Backoff after a failed batch (ms). */
const RETRY_MS = 5000;
/** Attempts before an article the embedder keeps refusing leaves the queue. */
const MAX_ATTEMPTS = 5;

/** A batch's outcome: the vectors to store, and the articles the embedder refused. */
type Embedded = { stored: StoredVector[]; refused: string[] };

export interface WorkerOptions {
  batchSize?: number;
  idleMs?: number;
  /**
   * How long a batch stays leased to this worker (default: the store's); keep it above the embedder's timeout × batch
   * size.
   */
  leaseMs?: number;
  log?: Log;
}

/** Drains the embedding queue in batches until stopped. */
export class EmbeddingWorker {
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private unsaved: Embedded | undefined;
  private busyRetries = 0;
  private queuedMissing = false;

  constructor(
    private readonly store: VectorStore,
    private readonly embedder: Embedder,
    private readonly options: WorkerOptions = {},
  ) {}

  /**
   * Embeds one batch; how many articles it stored. A failed batch is retried article by article: the refused are
   * deferred (dropped after MAX_ATTEMPTS); if all fail, the embedder is down: it throws, no attempt charged.
   */
  async runOnce(): Promise<number> {
    if (!this.queuedMissing) {
      // A write: retried like any other when another process holds the lock.
      const queued = await this.store.enqueueMissing(this.embedder.modelId);
      this.queuedMissing = true;
      if (queued > 0) this.options.log?.info({ queued, model: this.embedder.modelId }, 'articles queued for embedding');
    }
    // Vectors whose write found the store locked go first.
    if (this.unsaved) {
      await this.save(this.unsaved);
      const n = this.unsaved.stored.length;
      this.unsaved = undefined;
      return n;
    }
    const batch = await this.store.nextBatch(this.options.batchSize ?? 32, this.options.leaseMs);
    if (batch.length === 0) return 0;
    let stored: StoredVector[];
    const refused: string[] = [];
    try {
      const vectors = await this.embedder.embed(batch.map((b) => b.content));
      stored = batch.map((b, i) => ({ id: b.id, vector: vectors[i]! }));
    } catch (err) {
      if (batch.length === 1) throw err;
      stored = [];
      for (const b of batch) {
        try {
          const [vector] = await this.embedder.embed([b.content]);
          stored.push({ id: b.id, vector: vector! });
        } catch {
          refused.push(b.id);
        }
      }
      if (stored.length === 0) throw err;
    }
    const result = { stored, refused };
    try {
      await this.save(result);
    } catch (err) {
      if (isStoreBusy(err)) this.unsaved = result;
      throw err;
    }
    return stored.length;
  }

  private async save({ stored, refused }: Embedded): Promise<void> {
    await this.store.storeVectors(this.embedder.modelId, stored);
    if (refused.length > 0) {
      const dropped = await this.store.deferEmbedding(refused, Date.now(), MAX_ATTEMPTS);
      this.options.log?.warn({ refused: refused.length }, 'articles refused by the embedder, retried later');
      for (const id of dropped)
        this.options.log?.warn(
          { article: id, attempts: MAX_ATTEMPTS },
          'article dropped from embedding: listed and streamed but not searchable',
        );
    }
  }

  /** Runs until the queue is empty. */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  /** Starts draining in the background; the first round queues what the current model lacks. */
  async start(): Promise<void> {
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
      this.busyRetries = 0;
      this.schedule(n > 0 ? 0 : (this.options.idleMs ?? 500));
    } catch (err) {
      if (isStoreBusy(err)) {
        // Another process holds the write lock: retry soon (the event loop never waits on the lock), up to 1 s apart.
        this.busyRetries++;
        this.schedule(Math.min(1000, 20 * 2 ** Math.min(this.busyRetries, 6)));
        return;
      }
      this.options.log?.warn({ err: (err as Error).message }, 'embedding batch failed; retrying');
      this.schedule(RETRY_MS);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.current;
  }
}
