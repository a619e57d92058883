// Worker thread of IngestThread (ingest-thread.ts): the SQLite side of `ingestItems` (look-ups, the dedup
// plan, inserts, commit) on a second connection to the same file, so none of it holds the service's event
// loop. Plain JavaScript on purpose (as src/sources/prepare-worker.mjs): a worker is started by Node
// itself, outside the TypeScript loader of the main thread, so it registers tsx and then loads index.ts
// (the same adapter the main thread runs).
//
// workerData {file, busyTimeoutMs, preload}. Answers {id, op: 'ingest', items, at | clock} (one slice: one write
// transaction), {id, op: 'recordPoll', name, owner, outcome}, {id, op: 'nextBatch', limit} and {id, op:
// 'storeVectors', model, vectors} with {id, result} or {id, error: {name, message, code}}; {close: true} closes the connection and ends the thread.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { lowerThreadPriority, runPreloads } from '../../runtime/worker-side.mjs';

if (!parentPort) throw new Error('ingest-worker.mjs must run in a worker thread');
const port = parentPort;
// A slightly lower CPU priority (nice 5; the threads that prepare large inputs get 10): on a contended core
// the event loop runs first (its writes never wait for this thread's lock synchronously: they await their
// turn, write-turn.ts), but every write of ingestion goes through this thread (slices, poll records,
// vectors), so it keeps a fair share against other processes of a busy host (nice 10 would leave it a
// tenth of a core there, holding back the news itself).
lowerThreadPriority(5);
register();
await runPreloads();
const { SqliteStore } = await import('./index.ts');

// One message, one transaction: the main thread cuts the slices (src/store/ports/ingest-slice.ts).
// SQLite's own busy handler sleeps ever longer (up to 100 ms a try) while another connection holds the
// write lock; this thread waits in steps of 1 ms instead, up to workerData.busyTimeoutMs, so a slice starts
// as soon as the service's own short writes (poll records, embeddings) are done.
const store = new SqliteStore(workerData.file, {
  busyTimeoutMs: 0,
  ingestSlices: { maxItems: Number.MAX_SAFE_INTEGER },
});
const pause = new Int32Array(new SharedArrayBuffer(4));
const isBusy = (e) => typeof e?.code === 'string' && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(e.code);

async function patiently(write) {
  const until = performance.now() + workerData.busyTimeoutMs;
  for (;;) {
    try {
      return await write();
    } catch (e) {
      // Nothing was written (the transaction never began, or rolled back): try it again.
      if (!isBusy(e) || performance.now() >= until) throw e;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

port.on('message', async (m) => {
  if (m.close) {
    clearInterval(checkpoints);
    await store.close();
    port.close();
    return;
  }
  const { id } = m;
  try {
    const result =
      m.op === 'recordPoll'
        ? await patiently(() => store.sources.recordPoll(m.name, m.owner, m.outcome))
        : m.op === 'nextBatch'
          ? await store.vectors.nextBatch(m.limit)
          : m.op === 'storeVectors'
            ? await patiently(() => store.vectors.storeVectors(m.model, m.vectors))
            : // The main thread read its clock when it sent the slice (a clock function cannot cross threads).
              await patiently(() => store.sources.ingestItems(m.items, m.at ?? (() => m.clock)));
    port.postMessage({ id, result: result ?? null });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    port.postMessage({
      id,
      error: { name: e.name, message: e.message, code: typeof e.code === 'string' ? e.code : undefined },
    });
  }
});
// The service's own connection leaves checkpoints to this one (SqliteStore, ingestOffThread): besides the
// automatic ones of its commits, a passive checkpoint (never waits for a lock, never blocks a reader or
// the writer) every CHECKPOINT_EVERY_MS keeps the WAL short while nothing is ingested.
const CHECKPOINT_EVERY_MS = 2000;
const checkpoints = setInterval(() => {
  try {
    store.db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy or failing: the next round or the next commit tries again
  }
}, CHECKPOINT_EVERY_MS).unref();
port.postMessage({ ready: true });
