// What the service's worker-thread entries share (plain JavaScript, as they are: a worker is started by
// Node itself, outside the TypeScript loader): a lower CPU priority for the thread, the worker side of
// the chunk flow control of ./off-thread.ts (ChunkedWorker), and the test seam of its preloads.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';

/** Imports the modules the main thread asked every worker to load first (off-thread.ts `preloadInWorkers`: tests only). */
export async function runPreloads() {
  for (const url of workerData?.preload ?? []) await import(url);
}

/**
 * A lower CPU priority for this thread only (Linux: setpriority on the thread id, read from
 * /proc/thread-self), so on a contended core the event loop thread (requests, the stream, the admin
 * listener) runs first; elsewhere, or when refused, the thread keeps the process's priority.
 */
export function lowerThreadPriority(niceness) {
  if (!(niceness > 0)) return;
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), niceness);
  } catch {
    // not Linux, or not allowed: unchanged
  }
}

/**
 * Flow control: `send(id, items)` posts `{id, items}` and resolves once the main thread has answered:
 * true on `{id, next: true}` (after a turn of its event loop and once it is done with the chunk), false
 * on `{id, cancel: true}` (it wants no more: the worker stops that request, posting nothing else).
 * `acknowledge(message)` takes such an answer and is true when the message was one.
 */
export function chunkChannel(port) {
  const waiting = new Map();
  return {
    acknowledge({ id, next, cancel }) {
      if (!next && !cancel) return false;
      const go = waiting.get(id);
      waiting.delete(id);
      go?.(next === true);
      return true;
    },
    send(id, items) {
      const read = new Promise((resolve) => waiting.set(id, resolve));
      port.postMessage({ id, items });
      return read;
    },
  };
}
