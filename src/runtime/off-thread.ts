/**
 * One call at a time to a worker thread that answers in chunks: the ingestion steps that are pure but
 * long for a large input (a feed's parse, enrichment and identity keys; a push body's reading and
 * checks) run there, so they never hold the event loop. The worker (a plain .mjs module, see
 * src/sources/prepare-worker.mjs) answers a request `{id, ...}` with `{id, items}` messages of about a
 * hundred results, then `{id, done}`, or `{id, error: {name, message, ...}}`; it posts `{ready: true}`
 * once loaded. Flow control: after each `{id, items}` the worker waits for `{id, next: true}`, which this
 * thread sends after a turn of its event loop. Without it, chunks that queue up while the loop is busy
 * are all read (copied into this thread's heap) in one go: one long task.
 *
 * `stream` hands each chunk to a consumer and asks for the next one only once the consumer is done with
 * it (the ingestion paths store a chunk, then read the next): the items of a large input are never all
 * on this thread's heap at once, where thousands of them, alive for seconds, would be copied by the
 * collector's young-generation pauses (about 1 ms per MB) and then promoted. A consumer that throws
 * ends the call: the worker is told to stop (`{id, cancel: true}`) and the call rejects with that error.
 *
 * The thread is started on first use and kept; it holds the process open only while a call is under
 * way. When no worker thread can be had (a runtime without the TypeScript loader), `call` rejects with
 * OffThreadUnavailable and the caller does the work inline.
 */
import { Worker } from 'node:worker_threads';

let preloads: readonly string[] = [];

/**
 * Modules (URLs) that every worker thread started from now on imports before its own code: none in the
 * service. A test seam: a test makes a step of the ingestion throw inside a worker thread (for one
 * marked input) as it can on this thread, and checks that the worker paths answer as this one does.
 */
export function preloadInWorkers(urls: readonly string[]): void {
  preloads = [...urls];
}

/** What a worker thread started now is given as its `workerData.preload` (worker-side.mjs `runPreloads`). */
export function workerPreloads(): string[] {
  return [...preloads];
}

/** No worker thread could be started: do the work on this thread. */
export class OffThreadUnavailable extends Error {}

type Answer<I, D> =
  | { ready: true }
  | { id: number; items: I[] }
  | { id: number; done: D }
  | { id: number; error: Record<string, unknown> & { name: string; message: string } };

interface Pending<I, D> {
  consume: (items: I[]) => void | Promise<void>;
  resolve: (done: D) => void;
  reject: (e: unknown) => void;
}

export class ChunkedWorker<Req extends object, I, D> {
  private worker: Worker | null = null;
  private ready: Promise<Worker> | null = null;
  private readonly pending = new Map<number, Pending<I, D>>();
  private nextId = 1;

  constructor(
    private readonly url: URL,
    /** The error a worker's `{error}` answer stands for (its name, message and fields as sent). */
    private readonly rebuild: (e: Record<string, unknown> & { name: string; message: string }) => Error,
  ) {}

  /** The worker's items (in order) and its final answer; rejects with the rebuilt error. */
  async call(req: Req): Promise<{ items: I[]; done: D }> {
    const items: I[] = [];
    const done = await this.stream(req, (chunk) => {
      for (const item of chunk) items.push(item);
    });
    return { items, done };
  }

  /**
   * The worker's items chunk by chunk to `consume` (in order; the next chunk is asked for once the
   * returned promise settled), then its final answer; rejects with the rebuilt error, or with the
   * consumer's own.
   */
  async stream(req: Req, consume: (items: I[]) => void | Promise<void>): Promise<D> {
    let w: Worker;
    try {
      w = this.worker ?? (await this.start());
    } catch (e) {
      throw new OffThreadUnavailable(`no worker thread: ${e instanceof Error ? e.message : String(e)}`);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { consume, resolve, reject });
      // While a call is under way the thread keeps the process alive (its answer is awaited).
      w.ref();
      w.postMessage({ ...req, id });
    });
  }

  /** A chunk to its consumer; then the next chunk after a turn of the event loop, or the call ends. */
  private async take(w: Worker, id: number, p: Pending<I, D>, items: I[]): Promise<void> {
    try {
      await p.consume(items);
    } catch (e) {
      if (this.pending.get(id) !== p) return;
      this.settled(w, id);
      w.postMessage({ id, cancel: true });
      return p.reject(e);
    }
    setImmediate(() => {
      if (this.pending.get(id) === p) w.postMessage({ id, next: true });
    });
  }

  private settled(w: Worker, id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) w.unref();
  }

  private failAll(e: unknown): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.worker = null;
    this.ready = null;
  }

  private start(): Promise<Worker> {
    this.ready ??= new Promise<Worker>((resolve, reject) => {
      const w = new Worker(this.url, { workerData: { preload: workerPreloads() } });
      w.on('message', (m: Answer<I, D>) => {
        if ('ready' in m) {
          this.worker = w;
          // Unref'd here, after the 'message' listener (which refs): an idle thread holds nothing open.
          if (this.pending.size === 0) w.unref();
          return resolve(w);
        }
        const p = this.pending.get(m.id);
        if (!p) return;
        if ('items' in m) {
          void this.take(w, m.id, p, m.items);
        } else if ('done' in m) {
          this.settled(w, m.id);
          p.resolve(m.done);
        } else {
          this.settled(w, m.id);
          p.reject(this.rebuild(m.error));
        }
      });
      w.once('error', (e) => {
        reject(e);
        this.failAll(e);
      });
      w.once('exit', (code) => {
        const e = new Error(`the worker thread exited (${code})`);
        reject(e);
        this.failAll(e);
      });
    });
    return this.ready;
  }

  /** Stops the thread (tests; a process exits without it anyway). */
  async stop(): Promise<void> {
    const w = this.worker;
    this.failAll(new Error('the worker thread was stopped'));
    if (w) await w.terminate();
  }
}
