// Worker thread of IngestThread (ingest-thread.ts): the SQLite side of `ingestItems` (look-ups, the dedup
// plan, inserts, commit) on a second connection to the same file, so none of it holds the service's event
// loop. Plain JavaScript on purpose (as src/sources/feed/parse-worker.mjs): a worker is started by Node
// itself, outside the TypeScript loader of the main thread, so it registers tsx and then loads index.ts
// (the same adapter the main thread runs).
//
// workerData {file, busyTimeoutMs}. Answers {id, items, at | clock} (one slice: one write transaction)
// with {id, outcomes} or {id, error: {name, message, code}}.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

if (!parentPort) throw new Error('ingest-worker.mjs must run in a worker thread');
const port = parentPort;
register();
const { SqliteStore } = await import('./index.ts');

// One message, one transaction: the main thread sizes the slices (src/store/ports/sources-plan.ts).
const store = new SqliteStore(workerData.file, { busyTimeoutMs: workerData.busyTimeoutMs, ingestSlices: { maxItems: Number.MAX_SAFE_INTEGER } });

port.on('message', async ({ id, items, at, clock }) => {
  try {
    // The main thread read its clock when it sent the slice (a clock function cannot cross threads).
    const outcomes = await store.ingestItems(items, at ?? (() => clock));
    port.postMessage({ id, outcomes });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    port.postMessage({ id, error: { name: e.name, message: e.message, code: typeof e.code === 'string' ? e.code : undefined } });
  }
});
port.postMessage({ ready: true });
