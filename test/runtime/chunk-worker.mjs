// A worker for test/runtime/chunked-worker.test.ts, speaking ChunkedWorker's protocol with the service's
// own worker side (src/runtime/worker-side.mjs). {id, count, size}: `count` chunks of `size` numbers, then
// {id, done: 'sent N'}; a request it was told to cancel is remembered: {id, ask: 'cancelled'} answers
// {id, done: [ids of the requests stopped by a cancel]}.
import { parentPort } from 'node:worker_threads';
import { chunkChannel } from '../../src/runtime/worker-side.mjs';

const port = parentPort;
const chunks = chunkChannel(port);
const cancelled = [];
port.on('message', async ({ id, next, cancel, count, size, ask }) => {
  if (chunks.acknowledge({ id, next, cancel })) return;
  if (ask === 'cancelled') return port.postMessage({ id, done: cancelled });
  let n = 0;
  for (let c = 0; c < count; c++) {
    const items = Array.from({ length: size }, () => n++);
    if (!(await chunks.send(id, items))) {
      cancelled.push(id);
      return;
    }
  }
  port.postMessage({ id, done: `sent ${n}` });
});
port.postMessage({ ready: true });
