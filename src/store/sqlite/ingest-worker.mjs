// Worker thread of IngestThread (ingest-thread.ts), on a second connection to the same file. Plain JavaScript:
// Node starts a worker outside the main thread's TypeScript loader, so it registers tsx, then loads index.ts.
// Each request {id, op, …} is answered {id, result} or {id, error: {name, message, code}}; {close: true} ends it.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { lowerThreadPriority, runPreloads } from '../../runtime/worker-side.mjs';

if (!parentPort) throw new Error('ingest-worker.mjs must run in a worker thread');
const port = parentPort;
// Nice 5, not 10 like the input-preparing threads: the event loop runs first on a contended core, but every
// ingestion write goes through here, so it keeps a fair share on a busy host (docs/sources.md).
lowerThreadPriority(5);
register();
await runPreloads();
const { SqliteStore } = await import('./index.ts');

// One message, one transaction (the main thread cuts the slices). SQLite's busy handler backs off up to 100 ms
// a try; waiting in 1 ms steps starts a slice as soon as the service's own short writes are done.
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
// This connection owns the checkpoints (ingestOffThread); a passive one (never waits, never blocks) keeps the
// WAL short while nothing is ingested.
const CHECKPOINT_EVERY_MS = 2000;
const checkpoints = setInterval(() => {
  try {
    store.db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy or failing: the next round or the next commit tries again
  }
}, CHECKPOINT_EVERY_MS).unref();
port.postMessage({ ready: true });
