/**
 * The SQLite work of `ingestItems` on a worker thread (ingest-worker.mjs), for the service. Each slice of
 * an ingest (src/store/ports/ingest-slice.ts: one short write transaction) runs there, on a second
 * connection to the same file: the look-ups, the dedup plan, the inserts and the commit (a sync to disk)
 * cost a millisecond or more per item and grow with the archive, which on the event loop held requests,
 * the stream and the admin listener for tens of ms per slice. The main thread keeps the slicing (one
 * slice in flight, a turn of the event loop between slices): what it does per slice is copy the items
 * over and read the outcomes back.
 *
 * Same outcomes as the inline path: the worker runs the adapter's own `ingestItems` on one slice, inside
 * one IMMEDIATE transaction, and the write lock serialises it with every other writer (this process's
 * connection, the CLI), as for any second writer on the file. The receive clock is read on the main
 * thread when the slice is sent (a clock function cannot cross threads); the receive stamp is still
 * taken inside the transaction, never before the newest stored article (src/store/ports/ids.ts). An error
 * comes back with its name, message and code (SQLITE_BUSY, SQLITE_FULL…), so callers classify it as before.
 * The record of a poll (`recordPoll`, right after its ingest) runs there too. The thread's connection
 * does the WAL checkpoints while it runs (SqliteStore turns them off on its own connection).
 */
import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import type { ItemOutcome, PollOutcome, SourcedItem } from '../ports/index.js';
import { workerPreloads } from '../../runtime/off-thread.js';
import { setWriteGate } from './write-turn.js';
import type { SqliteSources } from './sources.js';
import type { SqliteVectors } from './vectors.js';

/**
 * The worker's connection waits this long at least for the write lock (in steps of 1 ms): waiting there
 * holds no event loop (the service's own connection waits a few ms only, SERVICE_BUSY_TIMEOUT_MS), and
 * the service's other writes (embeddings, webhooks) take the lock between slices.
 */
export const INGEST_THREAD_BUSY_TIMEOUT_MS = 1000;

type Answer =
  | { ready: true }
  | { id: number; result: unknown }
  | { id: number; error: { name: string; message: string; code?: string } };

interface Pending {
  resolve: (result: unknown) => void;
  reject: (e: unknown) => void;
}

/** An error as the worker reported it: same name, message and code as the adapter's. */
function rebuilt(e: { name: string; message: string; code?: string }): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code !== undefined) Object.assign(err, { code: e.code });
  return err;
}

/** What the worker runs: a slice of an ingest, or the record of a poll (the write that follows it). */
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

  /** Starts the worker thread now rather than on the first ingest (the service, at start). */
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

  /**
   * The record of a poll on the worker thread too: right after its ingest, it would otherwise wait for
   * the lock on the event loop (a few ms at most, then fail, losing the poll's counters) whenever another
   * writer (the CLI, a second poller) holds it; there it waits as a slice does.
   */
  async recordPoll(name: string, owner: string, outcome: PollOutcome): Promise<void> {
    await this.call({ op: 'recordPoll', name, owner, outcome }, () => this.inline.recordPoll(name, owner, outcome));
  }

  /**
   * The embedding queue's next batch, read on the worker thread: the read sorts the whole queue, which a
   * large ingest grows by thousands (tens of ms on the event loop per batch of 32).
   */
  async nextBatch(limit: number): Promise<{ id: string; content: string }[]> {
    return (await this.call({ op: 'nextBatch', limit }, () => this.inline.nextBatch(limit))) as {
      id: string;
      content: string;
    }[];
  }

  /**
   * The embedding worker's vectors written on the worker thread: a write of this connection would wait
   * for the write lock on the event loop (SQLite's busy handler sleeps there) whenever a slice holds it,
   * and its commit syncs the WAL there; on the thread it waits as a slice does.
   */
  async storeVectors(model: string, vectors: { id: string; vector: Float32Array }[]): Promise<void> {
    await this.call({ op: 'storeVectors', model, vectors }, () => this.inline.storeVectors(model, vectors));
  }

  /**
   * The turn of a write of the event loop's connection (write-turn.ts): none needed while this
   * thread writes nothing (undefined), else a promise resolved once its writes under way are done. An
   * ingest gives the event loop a turn between its slices (src/store/ports/ingest-slice.ts), where the
   * waiting writes run: they wait for the slice under way, not for the whole ingest.
   */
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
 * Starts the ingest thread and tells the ports to use it (their `writeVia`): the slices of
 * `sources.ingestItems` (each one transaction there), `sources.recordPoll`, and the embedding queue's
 * `vectors.nextBatch` and `vectors.storeVectors`; the other writes of `db` await their turn
 * (write-turn.ts). While the thread runs, the WAL checkpoints are its connection's (off on `db`: a
 * checkpoint run by a commit of the event loop's connection would hold the loop while it writes and
 * syncs the pages). The thread starts now.
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
  // The event loop's own writes wait for their turn instead of for the lock (write-turn.ts).
  setWriteGate(db, () => thread.writeGate());
  thread.warm();
  return thread;
}
