// Worker thread of readPushBodyOffThread (push.ts): readPushBody off the event loop. Plain JavaScript (as
// src/sources/prepare-worker.mjs): registers tsx, then loads push.ts, the code the main thread runs.
// {id, body, format} → {id, items} chunks of CHUNK lines in body order (each after {id, next}; {id, cancel}
// stops), then {id, done: true}; or {id, error: {name, message}} (PushBodyError) before any chunk.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { chunkChannel, lowerThreadPriority, runPreloads } from '../runtime/worker-side.mjs';

if (!parentPort) throw new Error('push-worker.mjs must run in a worker thread');
const port = parentPort;
// On a contended core the event loop thread runs first.
lowerThreadPriority(10);
register();
await runPreloads();
const { readPushBody, PushBodyError } = await import('./push.ts');

const CHUNK = 100;

// Flow control (src/runtime/off-thread.ts): after each chunk, wait for the main thread's {id, next}.
const chunks = chunkChannel(port);

port.on('message', async ({ id, next, cancel, body, format }) => {
  if (chunks.acknowledge({ id, next, cancel })) return;
  try {
    // No turns to give here: this thread serves nothing else.
    const lines = await readPushBody(body, format, { budgetMs: Number.POSITIVE_INFINITY });
    for (let i = 0; i < lines.length; i += CHUNK) {
      if (!(await chunks.send(id, lines.slice(i, i + CHUNK)))) return;
    }
    port.postMessage({ id, done: true });
  } catch (err) {
    port.postMessage({
      id,
      error: {
        name: err instanceof PushBodyError ? 'PushBodyError' : (err?.name ?? 'Error'),
        message: err instanceof Error ? err.message : String(err),
      },
    });
  }
});
port.postMessage({ ready: true });
