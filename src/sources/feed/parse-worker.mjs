// Worker thread of parseFeedOffThread (off-thread.ts). Plain JavaScript on purpose: a worker is started
// by Node itself, outside the TypeScript loader of the main thread (tsx, vitest, the CLI bundle), so it
// registers tsx and then loads parse.ts (the same code the main thread runs for small bodies).
//
// Answers {id, body, contentType, baseUrl} with the items in messages of at most CHUNK items (each one a
// separate, short task for the main thread to read), then {id, done: {format, title, minIntervalSeconds}},
// or {id, error: {kind, message}}.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { lowerThreadPriority } from '../../runtime/worker-side.mjs';

if (!parentPort) throw new Error('parse-worker.mjs must run in a worker thread');
const port = parentPort;
// On a contended core the event loop thread runs first.
lowerThreadPriority(10);
register();
const { parseFeed } = await import('./parse.ts');

const CHUNK = 200;

port.on('message', ({ id, body, contentType, baseUrl }) => {
  let feed;
  try {
    feed = parseFeed(body, { contentType, baseUrl });
  } catch (err) {
    port.postMessage({ id, error: { kind: err?.name === 'FeedError' ? err.kind : null, message: err instanceof Error ? err.message : String(err) } });
    return;
  }
  const { items, ...head } = feed;
  for (let i = 0; i < items.length; i += CHUNK) port.postMessage({ id, items: items.slice(i, i + CHUNK) });
  port.postMessage({ id, done: head });
});
port.postMessage({ ready: true });
