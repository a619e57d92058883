// Shared by the worker-thread entries, plain JavaScript because Node starts a worker outside the TypeScript
// loader: thread priority, the worker side of ./off-thread.ts flow control, and the test preloads.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';

/** Imports the modules every worker must load first (off-thread.ts `preloadInWorkers`: tests only). */
export async function runPreloads() {
  for (const url of workerData?.preload ?? []) await import(url);
}

/** Lowers this thread's priority only (Linux: its id from /proc/thread-self) so the event loop wins a busy core. */
export function lowerThreadPriority(niceness) {
  if (!(niceness > 0)) return;
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), niceness);
  } catch {
    // not Linux, or not allowed: unchanged
  }
}

/**
 * `send(id, items)` posts a chunk and resolves true on the main thread's `{id, next}`, false on `{id, cancel}`
 * (stop that request, post nothing more). `acknowledge(message)` is true when the message was such an answer.
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
