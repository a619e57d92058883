/**
 * The service's SQLite ingestion on a worker thread with its own connection, off the event loop
 * (docs/decisions/ingest-slices.md). It runs the adapter's own slices under the same write lock, and errors keep
 * name, message and code, so outcomes and error classes match the inline path.
 */
import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import type { ItemOutcome, PollOutcome, SourcedItem } from '../ports/index.js';
import { workerPreloads } from '../../runtime/off-thread.js';
import { setWriteGate } from './write-turn.js';
import type { SqliteSources } from './sources.js';
import type { SqliteVectors } from './vectors.js';

/** The worker's wait for the write lock, in 1 ms steps: it holds no event loop, unlike the service's own connection. */
export const INGEST_THREAD_BUSY_TIMEOUT_MS = 1000;

type Answer =
  | { ready: true }
  | { id: number; result: unknown }
  | { id: number; error: { name: string; message: string; code?: string } };

interface Pending {
  resolve: (result: unknown) => void;
  reject: (e: unknown) => void;
}

function rebuilt(e: { name: string; message: string; code?: string }): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code !== undefined) Object.assign(err, { code: e.code });
  return err;
}

type Request =
  | { op: 'ingest'; items: SourcedItem[]; at?: number; clock?: number }
  | { op: 'recordPoll'; name: string; owner: string; outcome: PollOutcome }
  | { op: 'nextBatch'; limit: number }
  | { op: 'storeVectors'; model: string; vectors: { id: string; vector: Float32Array }[] };

export class IngestThread {
  private worker: Worker | null = null;
  private ready: Promise<Worker> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** This thread's writes under way (they may hold the write lock). */
  private writing = 0;
  /** Writes of the event loop's connection waiting for their turn (writeGate). */
  private turns: (() => void)[] = [];

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
    /** This thread's own adapter, when no worker thread can be had (e.g. a runtime without tsx). */
    private readonly inline: {
      ingest: (items: SourcedItem[], at: number | (() => number)) => Promise<ItemOutcome[]>;
      recordPoll: (name: string, owner: string, outcome: PollOutcome) => Promise<void>;
      nextBatch: (limit: number) => Promise<{ id: string; content: string }[]>;
      storeVectors: (model: string, vectors: { id: string; vector: Float32Array }[]) => Promise<void>;
    },
    /** Told when the worker thread is up (true) and when it is gone (false). */
    private readonly onRunning: (running: boolean) => void = () => {},
  ) {}

  /** Starts the worker thread now rather than on the first ingest. */
  warm(): void {
    this.start().catch(() => {});
  }

  /** One slice, one transaction, on the worker thread; rejects with the adapter's error. */
  async ingestSlice(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]> {
    // The clock is read here, when the slice is sent (a clock function cannot cross threads).
    const r = await this.call(
      typeof at === 'number' ? { op: 'ingest', items, at } : { op: 'ingest', items, clock: at() },
      () => this.inline.ingest(items, at),
    );
    return r as ItemOutcome[];
  }

  /** On the thread: on the event loop it would give up after a few ms of another writer's lock, losing the counters. */
  async recordPoll(name: string, owner: string, outcome: PollOutcome): Promise<void> {
    await this.call({ op: 'recordPoll', name, owner, outcome }, () => this.inline.recordPoll(name, owner, outcome));
  }

  /** On the thread: the read sorts the whole queue, which a large ingest grows by thousands. */
  async nextBatch(limit: number): Promise<{ id: string; content: string }[]> {
    return (await this.call({ op: 'nextBatch', limit }, () => this.inline.nextBatch(limit))) as {
      id: string;
      content: string;
    }[];
  }

  /** On the thread: on the event loop its lock wait (SQLite's busy handler sleeps) and WAL sync would hold the loop. */
  async storeVectors(model: string, vectors: { id: string; vector: Float32Array }[]): Promise<void> {
    await this.call({ op: 'storeVectors', model, vectors }, () => this.inline.storeVectors(model, vectors));
  }

  /** An event-loop write's turn: after this thread's writes under way (one slice); undefined while it writes none. */
  writeGate(): Promise<void> | undefined {
    if (this.writing === 0) return undefined;
    return new Promise((resolve) => this.turns.push(resolve));
  }

  private async call(req: Request, inline: () => Promise<unknown>): Promise<unknown> {
    if (this.closed) throw new Error('the store is closed');
    let w: Worker;
    try {
      w = this.worker ?? (await this.start());
    } catch {
      return inline();
    }
    const write = req.op !== 'nextBatch';
    if (write) this.writing++;
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Held while a call is under way (its answer is awaited), not while idle.
      w.ref();
      w.postMessage({ ...req, id });
    });
    this.inFlight.add(answer);
    const forget = () => {
      this.inFlight.delete(answer);
      if (!write || --this.writing > 0) return;
      for (const go of this.turns.splice(0)) go();
    };
    answer.then(forget, forget);
    return answer;
  }

  private start(): Promise<Worker> {
    this.ready ??= new Promise<Worker>((resolve, reject) => {
      const w = new Worker(new URL('./ingest-worker.mjs', import.meta.url), {
        workerData: {
          file: this.file,
          busyTimeoutMs: Math.max(this.busyTimeoutMs, INGEST_THREAD_BUSY_TIMEOUT_MS),
          preload: workerPreloads(),
        },
      });
      w.on('message', (m: Answer) => {
        if ('ready' in m) {
          this.worker = w;
          if (this.pending.size === 0) w.unref();
          this.onRunning(true);
          return resolve(w);
        }
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (this.pending.size === 0) w.unref();
        if ('result' in m) p.resolve(m.result);
        else p.reject(rebuilt(m.error));
      });
      const fail = (e: Error) => {
        if (this.worker === w) this.onRunning(false);
        reject(e);
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
        this.worker = null;
        this.ready = null;
      };
      w.once('error', fail);
      w.once('exit', (code) => fail(new Error(`the ingest thread exited (${code})`)));
    });
    return this.ready;
  }

  /** Stops the worker thread (the store's close), once the slices under way are answered. */
  async close(): Promise<void> {
    this.closed = true;
    for (const go of this.turns.splice(0)) go();
    await Promise.allSettled([...this.inFlight]);
    const w = this.worker ?? (this.ready ? await this.ready.catch(() => null) : null);
    if (!w) return;
    // The worker closes its connection and ends; terminated if it has not within a second.
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.ref();
    w.postMessage({ close: true });
    const timer = setTimeout(() => void w.terminate(), 1000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Routes ingestion and the embedding queue to the thread. Checkpoints are off on `db` while it runs: one on the
 * event loop's connection would hold the loop while it writes and syncs pages.
 */
export function ingestOffThread(
  file: string,
  db: Database.Database,
  sources: SqliteSources,
  vectors: SqliteVectors,
  opts: { busyTimeoutMs: number },
): IngestThread {
  const inline = {
    ingest: async (items: SourcedItem[], at: number | (() => number)) => sources.ingestSlice(items, at),
    recordPoll: async (name: string, owner: string, outcome: PollOutcome) =>
      sources.recordPollHere(name, owner, outcome),
    nextBatch: async (limit: number) => vectors.nextBatchHere(limit),
    storeVectors: async (model: string, batch: { id: string; vector: Float32Array }[]) =>
      vectors.storeVectorsHere(model, batch),
  };
  const thread = new IngestThread(
    file,
    opts.busyTimeoutMs,
    inline,
    (running) => void (db.open && db.pragma(`wal_autocheckpoint = ${running ? 0 : 1000}`)),
  );
  // The ports send their work here; inside a transaction of `db` (store.transaction) it stays on `db`.
  sources.writeVia({
    ingestSlice: (items, at) => thread.ingestSlice(items, at),
    recordPoll: (name, owner, outcome) => thread.recordPoll(name, owner, outcome),
  });
  vectors.writeVia({
    nextBatch: (limit) => thread.nextBatch(limit),
    storeVectors: (model, batch) => thread.storeVectors(model, batch),
  });
  // The event loop's own writes await their turn rather than sleep in the busy handler (write-turn.ts).
  setWriteGate(db, () => thread.writeGate());
  thread.warm();
  return thread;
}
