/**
 * Local embedder: all-MiniLM-L6-v2 (384 dimensions, @lat.md/embed, offline) on worker threads, as the engine
 * is synchronous. Bulk chunks go round-robin across calls; a one-text call (a query) goes first, to an idle
 * worker or the pre-warmed query lane, never behind a bulk chunk. At most `maxQueries` at once, and niced
 * workers leave the event loop its core (docs/search.md "Latency").
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { EmbeddingUnavailableError, toUnitVector, type Embedder } from './embedder.js';

export const LOCAL_MODEL_ID = 'local:all-MiniLM-L6-v2';
export const LOCAL_DIMENSIONS = 384;
/** Worker threads run at nice 10: about a tenth of a core shared with the event loop thread (CFS weights). */
const DEFAULT_WORKER_NICENESS = 10;

export interface LocalEmbedderOptions {
  /** Most bulk worker threads (each holds a copy of the model; the query lane adds one). Default: CPUs, at most 4. */
  maxThreads?: number;
  /** Most one-text calls (queries) embedded at once. Default: the CPU count minus one, 1 to 4. */
  maxQueries?: number;
  /** Worker CPU niceness (Linux; 0: the process's): the event loop wins a shared core. Default 10. */
  niceness?: number;
  /** Texts per message to a worker, the unit of load balancing and of fairness. Default 8. */
  chunkSize?: number;
  /** @internal The worker script; tests replace it with a failing one. */
  workerUrl?: URL;
}

export interface LocalEmbedder extends Embedder {
  /** Terminates the workers; pending and later `embed` calls fail with EmbeddingUnavailableError. */
  close(): Promise<void>;
}

/** One `embed` call: its chunks not yet sent to a worker. */
interface Call {
  waiting: Chunk[];
  failed: boolean;
}

interface Chunk {
  texts: string[];
  query: boolean;
  call: Call;
  resolve(vectors: Float32Array[]): void;
  reject(err: EmbeddingUnavailableError): void;
}

interface Slot {
  worker: Worker;
  /** The query lane's worker: takes one-text calls only. */
  lane: boolean;
  /** The chunk the worker is embedding, or null when idle. */
  current: Chunk | null;
  send(chunk: Chunk): void;
}

interface WorkerAnswer {
  id: number;
  vectors?: Float32Array[];
  error?: string;
}

export function createLocalEmbedder(options: LocalEmbedderOptions = {}): LocalEmbedder {
  const settings: Settings = {
    maxThreads: options.maxThreads ?? Math.min(availableParallelism(), 4),
    maxQueries: options.maxQueries ?? Math.max(1, Math.min(availableParallelism() - 1, 4)),
    chunkSize: options.chunkSize ?? 8,
    niceness: options.niceness ?? DEFAULT_WORKER_NICENESS,
    workerUrl: options.workerUrl ?? new URL('./local-worker.mjs', import.meta.url),
  };
  if (!Number.isInteger(settings.maxThreads) || settings.maxThreads < 1)
    throw new RangeError(`maxThreads must be a positive integer, got ${settings.maxThreads}`);
  if (!Number.isInteger(settings.chunkSize) || settings.chunkSize < 1)
    throw new RangeError(`chunkSize must be a positive integer, got ${settings.chunkSize}`);
  const workers = new Workers(settings);
  return { modelId: LOCAL_MODEL_ID, embed: (texts) => workers.embed(texts), close: () => workers.close() };
}

type Settings = Required<LocalEmbedderOptions>;

class Workers {
  private readonly slots: Slot[] = [];
  /** Bulk calls with chunks waiting, in round-robin order. */
  private readonly calls: Call[] = [];
  /** One-text calls waiting, oldest first. */
  private readonly queries: Call[] = [];
  private queriesInFlight = 0;
  private nextId = 0;
  private closed = false;

  constructor(private readonly o: Settings) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) throw new EmbeddingUnavailableError('local embedder is closed');
    if (texts.length === 0) return [];
    const call: Call = { waiting: [], failed: false };
    const query = texts.length === 1;
    const parts: Promise<Float32Array[]>[] = [];
    for (let i = 0; i < texts.length; i += this.o.chunkSize) {
      const slice = texts.slice(i, i + this.o.chunkSize);
      parts.push(
        new Promise((resolve, reject) => {
          call.waiting.push({
            texts: slice,
            query,
            call,
            resolve,
            reject: (err) => {
              call.failed = true; // its other waiting chunks are dropped, not embedded for nothing
              reject(err);
            },
          });
        }),
      );
    }
    (query ? this.queries : this.calls).push(call);
    this.pump();
    const chunks = await Promise.all(parts);
    return chunks.flat().map((v) => {
      if (v.length !== LOCAL_DIMENSIONS)
        throw new EmbeddingUnavailableError(`local model returned ${v.length} dimensions`);
      return toUnitVector(v);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new EmbeddingUnavailableError('local embedder is closed');
    for (const call of [...this.calls.splice(0), ...this.queries.splice(0)])
      for (const chunk of call.waiting) chunk.reject(err);
    await Promise.all(
      this.slots.splice(0).map(async (slot) => {
        slot.current?.reject(err);
        slot.current = null;
        await slot.worker.terminate();
      }),
    );
  }

  private spawn(lane = false): Slot {
    const worker = new Worker(this.o.workerUrl, { workerData: { niceness: this.o.niceness, warm: lane } });
    // The id of the request in flight, so that a late answer is never given to the wrong chunk.
    let inFlight = -1;
    const slot: Slot = {
      worker,
      lane,
      current: null,
      send: (chunk) => {
        inFlight = this.nextId++;
        slot.current = chunk;
        if (chunk.query) this.queriesInFlight++;
        worker.ref(); // busy: keep the process alive until the answer comes
        worker.postMessage({ id: inFlight, texts: chunk.texts });
      },
    };
    const fail = (why: string) => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1); // the next chunk gets a fresh worker
      const chunk = slot.current;
      slot.current = null;
      if (chunk?.query) this.queriesInFlight--;
      chunk?.reject(new EmbeddingUnavailableError(`local embedding worker failed: ${why}`));
      this.pump();
    };
    worker.on('message', (msg: WorkerAnswer) => {
      const chunk = slot.current;
      if (!chunk || msg.id !== inFlight) return;
      slot.current = null;
      if (chunk.query) this.queriesInFlight--;
      worker.unref(); // idle: let the process exit
      if (msg.vectors && msg.vectors.length === chunk.texts.length) chunk.resolve(msg.vectors);
      else
        chunk.reject(
          new EmbeddingUnavailableError(`local embedding failed: ${msg.error ?? 'wrong number of vectors'}`),
        );
      this.pump();
    });
    worker.on('error', (err) => fail(err.message));
    worker.on('exit', (code) => fail(`exited with code ${code}`));
    worker.unref();
    this.slots.push(slot);
    if (!lane && !this.slots.some((s) => s.lane)) this.spawn(true);
    return slot;
  }

  /** The next chunk to embed from `queue`: round-robin over calls, skipping calls that already failed. */
  private nextChunk(queue: Call[] = this.calls): Chunk | undefined {
    for (let call = queue.shift(); call; call = queue.shift()) {
      if (call.failed) continue;
      const chunk = call.waiting.shift();
      if (!chunk) continue;
      if (call.waiting.length > 0) queue.push(call);
      return chunk;
    }
    return undefined;
  }

  private pump(): void {
    // Queries first: any idle worker, else the lane, never more than maxQueries at once.
    while (!this.closed && this.queries.length > 0 && this.queriesInFlight < this.o.maxQueries) {
      const bulkSlots = this.slots.filter((s) => !s.lane).length;
      const slot =
        this.slots.find((s) => s.current === null) ??
        (bulkSlots < this.o.maxThreads ? this.spawn() : this.slots.some((s) => s.lane) ? undefined : this.spawn(true));
      if (!slot) break;
      const chunk = this.nextChunk(this.queries);
      if (!chunk) break;
      slot.send(chunk);
    }
    // Bulk chunks: on the bulk workers only, up to maxThreads of them.
    while (!this.closed) {
      const idle = this.slots.find((s) => s.current === null && !s.lane);
      if (!idle && this.slots.filter((s) => !s.lane).length >= this.o.maxThreads) return;
      const chunk = this.nextChunk();
      if (!chunk) return;
      (idle ?? this.spawn()).send(chunk);
    }
  }
}
