/**
 * A polled feed's body to the items the store ingests, off the event loop when it is large, handed on
 * chunk by chunk. Parse (about 30 us per KiB), mapping, enrichment and identity keys (about 50-300 us per
 * item, tens of thousands of short-lived objects) run on a worker thread (prepare-worker.mjs) for bodies
 * of OFF_THREAD_MIN_BYTES and more; the items come back in chunks of PREPARED_CHUNK, and the next chunk
 * is asked for only once the caller has taken the one before (the poll stores it first). So a feed of
 * 5,000 items is never on the event loop's heap at once: held there for the seconds its ingest takes,
 * its megabytes would be copied by the collector's young-generation pauses and then promoted, the
 * longest pauses a poll caused. Smaller bodies are parsed here and mapped in slices
 * (src/runtime/slices.ts). Same items, same order, same FeedError as `parseFeed` + `toSourcedItems`;
 * a FeedError comes before the first chunk (the whole body is parsed first).
 */
import { ChunkedWorker, OffThreadUnavailable } from '../runtime/off-thread.js';
import { eachChunk, eachInSlices, type SliceBudget } from '../runtime/slices.js';
import type { SourcedItem, UrgencySetting } from '../store/ports/index.js';
import { FeedError, parseFeed, type FeedErrorKind, type ParsedFeed } from './feed/index.js';
import { prepareFeedItem, type FailedFeedItem, type PreparedFeedItem } from './pipeline.js';

/** Bodies at least this large are prepared on the worker thread (smaller ones: about 2 ms of work here). */
export const OFF_THREAD_MIN_BYTES = 64 * 1024;

/** Items per chunk handed to the caller (the worker's chunk size too: prepare-worker.mjs). */
export const PREPARED_CHUNK = 100;

/** What a feed says about itself, and how many items it had (with or without text). */
export type FeedHead = Omit<ParsedFeed, 'items'> & { itemCount: number };

/** The items of a chunk the store is not given: without text (their external ids), or failed (prepareFeedItem). */
export interface SkippedItems {
  textless: string[];
  failed: FailedFeedItem[];
}

/** Takes one chunk of prepared items; the next chunk comes once the returned promise settled. */
export type TakeItems = (items: SourcedItem[], skipped: SkippedItems) => void | Promise<void>;

type Request = {
  body: Uint8Array;
  contentType: string | null;
  baseUrl: string;
  source: { name: string; urgency: UrgencySetting };
};

let worker: ChunkedWorker<Request, PreparedFeedItem, FeedHead> | null = null;

/** A chunk of prepared items to `take`, as the items to store and the others. */
function takeChunk(chunk: PreparedFeedItem[], take: TakeItems): void | Promise<void> {
  const items: SourcedItem[] = [];
  const skipped: SkippedItems = { textless: [], failed: [] };
  for (const p of chunk) {
    if ('textless' in p) skipped.textless.push(p.textless);
    else if ('failed' in p) skipped.failed.push(p.failed);
    else items.push(p);
  }
  return take(items, skipped);
}
const thread = () =>
  (worker ??= new ChunkedWorker(new URL('./prepare-worker.mjs', import.meta.url), (e) =>
    e.name === 'FeedError' && typeof e.kind === 'string'
      ? new FeedError(e.kind as FeedErrorKind, e.message)
      : Object.assign(new Error(e.message), { name: e.name }),
  ));

/**
 * The feed's items as the store ingests them, in feed order, in chunks to `take`, with the chunk's items
 * that have no text (their external ids) and those whose preparation failed with an unexpected error
 * (by guid: one item never fails its feed); answers what the feed says about itself. Throws FeedError as
 * `parseFeed` does (before any chunk), or what `take` threw (no chunk after it).
 */
export async function prepareFeedItems(
  body: Uint8Array,
  opts: { contentType?: string | null; baseUrl: string },
  source: { name: string; urgency: UrgencySetting },
  take: TakeItems,
  budget: SliceBudget = {},
): Promise<FeedHead> {
  if (body.length >= OFF_THREAD_MIN_BYTES) {
    try {
      return await thread().stream(
        {
          body,
          contentType: opts.contentType ?? null,
          baseUrl: opts.baseUrl,
          source: { name: source.name, urgency: source.urgency },
        },
        (chunk) => takeChunk(chunk, take),
      );
    } catch (e) {
      if (!(e instanceof OffThreadUnavailable)) throw e;
      // No worker thread (a runtime without the TypeScript loader): here, the mapping in slices.
    }
  }
  const { items, ...head } = parseFeed(body, opts);
  const prepared: PreparedFeedItem[] = [];
  await eachInSlices(items, (item) => void prepared.push(prepareFeedItem(source, item)), budget);
  await eachChunk(prepared, PREPARED_CHUNK, (chunk) => takeChunk(chunk, take));
  return { ...head, itemCount: items.length };
}

/** Stops the worker thread (tests; a process exits without it anyway). */
export async function stopFeedPreparer(): Promise<void> {
  const w = worker;
  worker = null;
  await w?.stop();
}
