/**
 * A worker thread answering in chunks, so long pure ingestion steps never hold the event loop. A request `{id}`
 * gets `{id, items}` chunks, then `{id, done}` or `{id, error}`; each chunk waits for `{id, next}` (sent once
 * consumed, after a turn) or `{id, cancel}`, so a large input is never all on this heap, where young-generation
 * GC would copy it. Without a worker thread (no TypeScript loader): OffThreadUnavailable, work inline.
 */
import { Worker } from 'node:worker_threads';

let preloads: readonly string[] = [];

/** Test seam: module URLs every worker thread started from now on imports before its own code. */
export function preloadInWorkers(urls: readonly string[]): void {
  preloads = [...urls];
}

/** No worker thread could be started: do the work on this thread. */
export class OffThreadUnavailable extends Error {}

/** An error as a worker sends it: its name, message and own fields. */
type SentError = Record<string, unknown> & { name: string; message: string };

type Answer<I, D> =
  { ready: true } | { id: number; items: I[] } | { id: number; done: D } | { id: number; error: SentError };

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
    private readonly rebuild: (e: SentError) => Error,
  ) {}

  /** The worker's items (in order) and its final answer; rejects with the rebuilt error. */
  async call(req: Req): Promise<{ items: I[]; done: D }> {
    const items: I[] = [];
    const done = await this.stream(req, (chunk) => {
      for (const item of chunk) items.push(item);
    });
    return { items, done };
  }

  /** Chunks to `consume` in order, each once the last settled; then the final answer, or either side's error. */
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
      // Ref'd while a call is under way: its answer is awaited.
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
      const w = new Worker(this.url, { workerData: { preload: preloads } });
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

  /** Stops the thread (tests). */
  async stop(): Promise<void> {
    const w = this.worker;
    this.failAll(new Error('the worker thread was stopped'));
    if (w) await w.terminate();
  }
}
