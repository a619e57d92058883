/**
 * `parseFeed` of a large body on a worker thread. Parsing is one synchronous call of the XML parser:
 * about 30 us per KiB (a 5 MiB feed of 5,000 items: ~150 ms), which on the event loop would stall every
 * request and stream meanwhile. Bodies under OFF_THREAD_MIN_BYTES (~2 ms of work) are parsed inline;
 * larger ones go to one worker (started on first use, kept, not holding the process open), whose items
 * come back in messages of a few hundred, each read in its own short task. Same result as `parseFeed`,
 * FeedError included.
 */
import { Worker } from 'node:worker_threads';
import { FeedError, type FeedErrorKind } from './errors.js';
import { parseFeed, type FeedItem, type ParsedFeed } from './parse.js';

/** Bodies at least this large are parsed on the worker thread. */
export const OFF_THREAD_MIN_BYTES = 64 * 1024;

type Answer =
  | { ready: true }
  | { id: number; items: FeedItem[] }
  | { id: number; done: Omit<ParsedFeed, 'items'> }
  | { id: number; error: { kind: FeedErrorKind | null; message: string } };

interface Pending {
  items: FeedItem[];
  resolve: (feed: ParsedFeed) => void;
  reject: (e: unknown) => void;
}

let worker: Worker | null = null;
let ready: Promise<Worker> | null = null;
const pending = new Map<number, Pending>();
let nextId = 1;

function failAll(e: unknown): void {
  for (const p of pending.values()) p.reject(e);
  pending.clear();
  worker = null;
  ready = null;
}

/** A parse is over: the thread stops holding the process once none is under way. */
function settled(w: Worker, id: number): void {
  pending.delete(id);
  if (pending.size === 0) w.unref();
}

function start(): Promise<Worker> {
  ready ??= new Promise<Worker>((resolve, reject) => {
    const w = new Worker(new URL('./parse-worker.mjs', import.meta.url));
    w.on('message', (m: Answer) => {
      if ('ready' in m) {
        worker = w;
        // Held while starting (a caller awaits it); from now on only while a parse is under way (an idle
        // thread must not keep the process alive). Unref'd here, after the 'message' listener, which refs.
        if (pending.size === 0) w.unref();
        return resolve(w);
      }
      const p = pending.get(m.id);
      if (!p) return;
      if ('items' in m) {
        for (const item of m.items) p.items.push(item);
      } else if ('done' in m) {
        settled(w, m.id);
        p.resolve({ format: m.done.format, title: m.done.title, items: p.items, minIntervalSeconds: m.done.minIntervalSeconds });
      } else {
        settled(w, m.id);
        p.reject(m.error.kind === null ? new Error(m.error.message) : new FeedError(m.error.kind, m.error.message));
      }
    });
    w.once('error', (e) => {
      reject(e);
      failAll(e);
    });
    w.once('exit', (code) => {
      const e = new Error(`the feed parser thread exited (${code})`);
      reject(e);
      failAll(e);
    });
  });
  return ready;
}

/** `parseFeed`, on the worker thread when the body is large (see the module comment). */
export async function parseFeedOffThread(body: Uint8Array, opts: { contentType?: string | null; baseUrl: string }): Promise<ParsedFeed> {
  if (body.length < OFF_THREAD_MIN_BYTES) return parseFeed(body, opts);
  let w: Worker;
  try {
    w = worker ?? (await start());
  } catch {
    // No worker thread to be had (e.g. a runtime without tsx): parse here rather than not at all.
    return parseFeed(body, opts);
  }
  const id = nextId++;
  return new Promise<ParsedFeed>((resolve, reject) => {
    pending.set(id, { items: [], resolve, reject });
    // While a parse is under way the thread keeps the process alive (its answer is awaited).
    w.ref();
    // A copy goes over (the caller's buffer may be a view into a pool).
    w.postMessage({ id, body, contentType: opts.contentType ?? null, baseUrl: opts.baseUrl });
  });
}

/** Stops the worker thread (tests; a process exits without it anyway). */
export async function stopFeedParser(): Promise<void> {
  const w = worker;
  failAll(new Error('the feed parser thread was stopped'));
  if (w) await w.terminate();
}
