// Worker thread of parseFeedOffThread (off-thread.ts). Plain JavaScript on purpose: a worker is started
// by Node itself, outside the TypeScript loader of the main thread (tsx, vitest, the CLI bundle), so it
// registers tsx and then loads parse.ts (the same code the main thread runs for small bodies).
//
// Answers {id, body, contentType, baseUrl} with the items in messages of at most CHUNK items (each one a
// separate, short task for the main thread to read), then {id, done: {format, title, minIntervalSeconds}},
// or {id, error: {kind, message}}.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

if (!parentPort) throw new Error('parse-worker.mjs must run in a worker thread');
const port = parentPort;
// A lower CPU priority for this thread only (Linux: setpriority on the thread id, from /proc/thread-self,
// as src/search/local-worker.mjs), so on a contended core the event loop thread (requests, the stream,
// the admin listener) runs first; elsewhere, or when refused, the thread keeps the process's priority.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 10);
} catch {
  // not Linux, or not allowed: unchanged
}
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
