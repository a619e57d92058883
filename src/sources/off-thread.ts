/**
 * A polled feed's body to the items the store ingests, off the event loop when it is large: parse (about
 * 30 us per KiB), mapping, enrichment and identity keys (about 50-300 us per item, tens of thousands of
 * short-lived objects) run on a worker thread (prepare-worker.mjs) for bodies of OFF_THREAD_MIN_BYTES
 * and more; the items come back in chunks of a few hundred, each read in its own short task. Smaller
 * bodies are parsed here and mapped in slices (src/runtime/slices.ts). Same items, same order, same
 * FeedError as `parseFeed` + `toSourcedItems`.
 */
import { ChunkedWorker, OffThreadUnavailable } from '../runtime/off-thread.js';
import type { SliceBudget } from '../runtime/slices.js';
import type { SourcedItem, UrgencySetting } from '../store/ports/index.js';
import { FeedError, OFF_THREAD_MIN_BYTES, parseFeed, parseFeedOffThread, type FeedErrorKind, type ParsedFeed } from './feed/index.js';
import { toSourcedItemsInSlices } from './pipeline.js';

/** What a feed says about itself, and how many items it had (with or without text). */
export type FeedHead = Omit<ParsedFeed, 'items'> & { itemCount: number };

type Request = { body: Uint8Array; contentType: string | null; baseUrl: string; source: { name: string; urgency: UrgencySetting } };

let worker: ChunkedWorker<Request, SourcedItem, FeedHead> | null = null;
const thread = () =>
  (worker ??= new ChunkedWorker(new URL('./prepare-worker.mjs', import.meta.url), (e) =>
    e.name === 'FeedError' && typeof e.kind === 'string' ? new FeedError(e.kind as FeedErrorKind, e.message) : Object.assign(new Error(e.message), { name: e.name }),
  ));

/**
 * The feed's items as the store ingests them (items without text left out: `feed.itemCount -
 * items.length` of them), in feed order; throws FeedError as `parseFeed` does.
 */
export async function prepareFeedItems(
  body: Uint8Array,
  opts: { contentType?: string | null; baseUrl: string },
  source: { name: string; urgency: UrgencySetting },
  budget: SliceBudget = {},
): Promise<{ feed: FeedHead; items: SourcedItem[] }> {
  if (body.length >= OFF_THREAD_MIN_BYTES) {
    try {
      const { items, done } = await thread().call({ body, contentType: opts.contentType ?? null, baseUrl: opts.baseUrl, source: { name: source.name, urgency: source.urgency } });
      return { feed: done, items };
    } catch (e) {
      if (!(e instanceof OffThreadUnavailable)) throw e;
      // No worker thread: the parse thread of ./feed if it can be had, the mapping here in slices.
    }
  }
  const parsed = body.length >= OFF_THREAD_MIN_BYTES ? await parseFeedOffThread(body, opts) : parseFeed(body, opts);
  const { items, ...head } = parsed;
  return { feed: { ...head, itemCount: items.length }, items: await toSourcedItemsInSlices(source, items, budget) };
}

/** Stops the worker thread (tests; a process exits without it anyway). */
export async function stopFeedPreparer(): Promise<void> {
  const w = worker;
  worker = null;
  await w?.stop();
}
