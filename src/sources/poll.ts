/** One poll of a claimed source, fetch to store; ./poll-record.ts records the result, ./poller.ts schedules. */
import { FeedError, type FeedErrorKind, type FetchOptions, type FetchResult, type Validators } from './feed/index.js';
import { prepareFeedItems } from './off-thread.js';
import { storeOffers, type ItemFailure, type LineOutcome } from '../ingest/pipeline.js';
import type { FailedFeedItem } from './pipeline.js';
import { feedFloorMs } from './poll-rules.js';
import type { SourceRecord, SourceStore } from '../store/ports/index.js';

/** Stopped, paused or removed while storing: the rest is not stored. */
class PollAborted extends Error {}

export type FetchFn = (url: string, validators: Validators, opts: FetchOptions) => Promise<FetchResult>;

export type PollResult =
  /** Stopped, paused or removed meanwhile: nothing to record but the lease to give back. */
  | { kind: 'aborted' }
  /** The source failed (HTTP, network, timeout, a body that is not a feed...). */
  | {
      kind: 'failed';
      at: number;
      status: number | null;
      error: FeedErrorKind;
      message: string;
      retryAfterMs: number | null;
    }
  /** Our side failed (the store), not the source. */
  | { kind: 'store-failed'; status: number; cause: unknown }
  /** Fetched (200) or unchanged (304); one outcome per item offered to the store. */
  | {
      kind: 'fetched';
      /** A 304: the feed is as the stored validators describe it. */
      notModified: boolean;
      at: number;
      status: number;
      etag: string | null;
      lastModified: string | null;
      minIntervalMs: number | null;
      outcomes: LineOutcome[];
      /** Textless items not offered before (each counted once). */
      unusable: number;
      /** Items whose preparation or dedup step threw (the others were stored). */
      failed: FailedFeedItem[];
    };

export interface PollSteps {
  store: SourceStore;
  fetch: FetchFn;
  fetchOptions: Omit<FetchOptions, 'signal'>;
  clock: () => number;
}

/** Polls `rec` once, from fetch to store; `signal` abandons it between steps. */
export async function pollOnce(
  rec: SourceRecord,
  signal: AbortSignal,
  { store, fetch, fetchOptions, clock }: PollSteps,
): Promise<PollResult> {
  const validators: Validators = { etag: rec.etag, lastModified: rec.lastModified };
  const result = await fetch(rec.url, validators, { ...fetchOptions, signal });
  if (signal.aborted) return { kind: 'aborted' };
  const at = clock();
  // The same fields: status, error kind, message and Retry-After.
  if (result.kind === 'error') return { ...result, kind: 'failed', at };
  if (result.kind === 'not-modified') {
    return {
      kind: 'fetched',
      notModified: true,
      at,
      status: 304,
      etag: result.validators.etag ?? rec.etag,
      lastModified: result.validators.lastModified ?? rec.lastModified,
      minIntervalMs: rec.minIntervalMs,
      outcomes: [],
      unusable: 0,
      failed: [],
    };
  }
  return storeFeed(rec, result, at, signal, { store, clock });
}

/** A fetched feed's items, stored chunk by chunk, each before the next is read (docs/sources.md "Large inputs"). */
async function storeFeed(
  rec: SourceRecord,
  result: Extract<FetchResult, { kind: 'ok' }>,
  at: number,
  signal: AbortSignal,
  { store, clock }: Pick<PollSteps, 'store' | 'clock'>,
): Promise<PollResult> {
  const outcomes: LineOutcome[] = [];
  const textless: string[] = [];
  const failed: FailedFeedItem[] = [];
  let offered = 0;
  let unusable = 0;
  let storeFailure: { cause: unknown } | undefined;
  /** A write of the store step: its failure is the store's (`store-failed`), not the feed's. */
  const storeStep = async <T>(write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (cause) {
      storeFailure = { cause };
      throw cause;
    }
  };
  let feed;
  try {
    feed = await prepareFeedItems(
      result.body,
      { contentType: result.contentType, baseUrl: result.finalUrl },
      { name: rec.name, urgency: rec.urgency },
      async (items, skipped) => {
        if (signal.aborted) throw new PollAborted();
        textless.push(...skipped.textless);
        failed.push(...skipped.failed);
        const first = offered + 1;
        offered += items.length;
        // An item whose dedup step fails is reported by its id at the source; the others are stored.
        const onFailed = (f: ItemFailure) =>
          void failed.push({ guid: items[f.line - first]!.externalId, errClass: f.errClass });
        const answer = await storeStep(() =>
          storeOffers(
            items.map((item, i) => ({ line: first + i, item })),
            store,
            clock,
            undefined,
            onFailed,
          ),
        );
        outcomes.push(...answer.results);
      },
    );
    // Items without text have a record of their own, so a feed that keeps listing one counts it once.
    if (textless.length > 0) unusable = await storeStep(() => store.recordTextlessItems(rec.name, textless, clock()));
  } catch (e) {
    if (e instanceof PollAborted) return { kind: 'aborted' };
    if (storeFailure) return { kind: 'store-failed', status: result.status, cause: storeFailure.cause };
    if (!(e instanceof FeedError)) throw e;
    return { kind: 'failed', at, status: result.status, error: e.kind, message: e.message, retryAfterMs: null };
  }
  return {
    kind: 'fetched',
    notModified: false,
    at: clock(),
    status: result.status,
    etag: result.validators.etag,
    lastModified: result.validators.lastModified,
    minIntervalMs: feedFloorMs(feed.minIntervalSeconds),
    outcomes,
    unusable,
    failed,
  };
}
