// Worker thread of prepareFeedItems (off-thread.ts): parses a large feed body and prepares its items off the
// event loop. Plain JavaScript: Node starts a worker outside the TypeScript loader, so it registers tsx first.
// Answers {id, body, contentType, baseUrl, source} with {id, items} chunks of PreparedFeedItems in feed order
// (flow control: ../runtime/off-thread.ts), then {id, done: FeedHead} or {id, error: {name, message, kind}}.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { chunkChannel, lowerThreadPriority, runPreloads } from '../runtime/worker-side.mjs';

if (!parentPort) throw new Error('prepare-worker.mjs must run in a worker thread');
const port = parentPort;
lowerThreadPriority(10);
register();
await runPreloads();
const { parseFeed } = await import('./feed/parse.ts');
const { prepareFeedItem, PREPARED_CHUNK: CHUNK } = await import('./pipeline.ts');

const chunks = chunkChannel(port);

port.on('message', async ({ id, next, cancel, body, contentType, baseUrl, source }) => {
  if (chunks.acknowledge({ id, next, cancel })) return;
  try {
    const { items, ...head } = parseFeed(body, { contentType, baseUrl });
    for (let i = 0; i < items.length; i += CHUNK) {
      // Each item by itself: one that throws is answered as failed, the others go on (pipeline.ts).
      const mapped = items.slice(i, i + CHUNK).map((item) => prepareFeedItem(source, item));
      if (!(await chunks.send(id, mapped))) return;
    }
    port.postMessage({ id, done: { ...head, itemCount: items.length } });
  } catch (err) {
    port.postMessage({
      id,
      error: {
        name: err?.name ?? 'Error',
        message: err instanceof Error ? err.message : String(err),
        kind: err?.name === 'FeedError' ? err.kind : null,
      },
    });
  }
});
port.postMessage({ ready: true });
