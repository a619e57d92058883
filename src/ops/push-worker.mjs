// Worker thread of readPushBodyOffThread (push.ts): a large push body read and checked (each line's
// JSON, its fields, enrichment and identity keys: readPushBody) off the service's event loop. Plain
// JavaScript on purpose (as src/sources/prepare-worker.mjs): registers tsx, then loads push.ts, the
// same code the main thread runs for small bodies.
//
// Answers {id, body, format} with {id, items} messages of at most CHUNK PushLines (body order; each after
// the main thread's {id, next} for the one before; {id, cancel} stops the request), then {id, done: true},
// or {id, error: {name, message}} (PushBodyError: the whole body is refused, before any chunk).
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
