/**
 * A polled feed's body to store items in chunks, the next once the caller took the last: a large body is parsed
 * and prepared on a worker thread (prepare-worker.mjs), so it is never all on the event loop's heap
 * (docs/sources.md "Large inputs"); a small one here, in slices. Same items, order and FeedError either way.
 */
import { ChunkedWorker, OffThreadUnavailable } from '../runtime/off-thread.js';
import { eachChunk, mapInSlices } from '../runtime/slices.js';
import type { SourcedItem } from '../store/ports/index.js';
import { FeedError, parseFeed, type FeedErrorKind, type ParsedFeed } from './feed/index.js';
import {
  PREPARED_CHUNK,
  prepareFeedItem,
  type FailedFeedItem,
  type FeedSource,
  type PreparedFeedItem,
} from './pipeline.js';

/** Bodies at least this large are prepared on the worker thread. */
export const OFF_THREAD_MIN_BYTES = 64 * 1024;

/** What a feed says about itself, and how many items it had (with or without text). */
export type FeedHead = Omit<ParsedFeed, 'items'> & { itemCount: number };

/** A chunk's items the store is not given: textless (external ids) or failed (prepareFeedItem). */
interface SkippedItems {
  textless: string[];
  failed: FailedFeedItem[];
}

/** Takes one chunk of prepared items; the next chunk comes once the returned promise settled. */
type TakeItems = (items: SourcedItem[], skipped: SkippedItems) => void | Promise<void>;

/** What the worker thread is sent per feed. */
type Request = { body: Uint8Array; contentType: string | null; baseUrl: string; source: FeedSource };

let worker: ChunkedWorker<Request, PreparedFeedItem, FeedHead> | null = null;

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
 * The feed's store items in feed order, in chunks to `take` with that chunk's skipped items; answers the feed's
 * head. Throws FeedError as `parseFeed` does (before any chunk), or what `take` threw (no chunk after it).
 */
export async function prepareFeedItems(
  body: Uint8Array,
  opts: { contentType?: string | null; baseUrl: string },
  source: FeedSource,
  take: TakeItems,
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
      // No worker thread (no TypeScript loader): prepared here, in slices.
    }
  }
  const { items, ...head } = parseFeed(body, opts);
  const prepared = await mapInSlices(items, (item) => prepareFeedItem(source, item));
  await eachChunk(prepared, PREPARED_CHUNK, (chunk) => takeChunk(chunk, take));
  return { ...head, itemCount: items.length };
}

/** Stops the worker thread (tests). */
export async function stopFeedPreparer(): Promise<void> {
  const w = worker;
  worker = null;
  await w?.stop();
}
