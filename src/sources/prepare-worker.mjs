// Worker thread of prepareFeedItems (off-thread.ts): a large feed body parsed (./feed/parse.ts), then its
// items mapped, enriched and given their identity keys (./pipeline.ts prepareFeedItem), all off the
// service's event loop. Plain JavaScript on purpose (a worker is started by Node itself, outside the
// TypeScript loader of the main thread): registers tsx, then
// loads the same TypeScript modules the main thread runs for small bodies.
//
// Answers {id, body, contentType, baseUrl, source} with {id, items} messages of at most CHUNK
// PreparedFeedItems (feed order: an item to store, a textless item's id, or a failed item's guid and
// error class; each after the main thread's {id, next} for the
// one before; {id, cancel} stops the request), then {id, done: {format, title, minIntervalSeconds,
// itemCount}}, or {id, error: {name, message, kind}} (a FeedError comes before any chunk: the parse is
// done first).
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { chunkChannel, lowerThreadPriority, runPreloads } from '../runtime/worker-side.mjs';

if (!parentPort) throw new Error('prepare-worker.mjs must run in a worker thread');
const port = parentPort;
// On a contended core the event loop thread runs first.
lowerThreadPriority(10);
register();
await runPreloads();
const { parseFeed } = await import('./feed/parse.ts');
const { prepareFeedItem } = await import('./pipeline.ts');

// PREPARED_CHUNK of ./off-thread.ts.
const CHUNK = 100;

// Flow control (src/runtime/off-thread.ts): after each chunk, wait for the main thread's {id, next}.
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
