/**
 * The poller's bookkeeping: a poll's result becomes the source's record (`recordPoll`, which gives the lease
 * back), counters, the report, and one log line per change of state, not per poll. A poll that throws is
 * recorded as an `internal` failure naming the error's class, so it is retried on the failure schedule.
 */
import { errorText, type Log } from '../domain/log.js';
import type { FeedErrorKind } from './feed/index.js';
import { nextPollAfterFailure, nextPollAfterSuccess, POLL_DEFAULTS } from './poll-rules.js';
import type { PollResult } from './poll.js';
import type { FailedFeedItem } from './pipeline.js';
import { errorClass, failureClass, stackFrames } from '../store/ports/errors.js';
import type { DuplicateReason, PollOutcome, SourceRecord, SourceStore } from '../store/ports/index.js';
import { boundedPollOutcome } from '../store/ports/sources-rows.js';

/** The counter label of each kind of feed error (every kind has one: the compiler checks it). */
const ERROR_LABEL = {
  parse: 'parse',
  charset: 'charset',
  'too-large': 'too_large',
  http: 'http',
  timeout: 'timeout',
  redirects: 'redirects',
  network: 'network',
  refused: 'refused',
} as const satisfies Record<FeedErrorKind, string>;

/** Labels of the poll and item counters (bounded). `internal`: the poll threw (a fault of the service). */
type PollOutcomeLabel = 'ok' | 'not_modified' | 'store' | 'aborted' | 'internal' | (typeof ERROR_LABEL)[FeedErrorKind];
/** `failed`: an item whose preparation or dedup step threw (the others of its poll were stored). */
const ITEM_OUTCOME_LABELS = [
  'stored',
  'same_item',
  'same_url',
  'same_headline',
  'near_duplicate',
  'unusable',
  'failed',
] as const;
type ItemOutcomeLabel = (typeof ITEM_OUTCOME_LABELS)[number];

const DUPLICATE_LABEL: Record<DuplicateReason, ItemOutcomeLabel> = {
  'same-item': 'same_item',
  'same-url': 'same_url',
  'same-headline': 'same_headline',
  'near-duplicate': 'near_duplicate',
};

export interface PollerMetrics {
  sourcePolls: { inc(labels: { outcome: PollOutcomeLabel }): void };
  sourceItems: { inc(labels: { outcome: ItemOutcomeLabel }, n: number): void };
}

/** What one poll did (progress lines, tests). */
export interface PollReport {
  source: string;
  outcome: 'ok' | 'not-modified' | 'error';
  status: number | null;
  /** `<kind>: <message>` for an error (as `fns sources list` shows it), else null. */
  error: string | null;
  /** New items offered: ingested + deduplicated + unusable (no text, counted the first time only). */
  seen: number;
  ingested: number;
  deduplicated: number;
  failures: number;
  nextPollAt: number;
  /** Ids of the stored articles, in feed order. */
  storedIds: string[];
  /** Items that failed with an unexpected error (by guid and the error's class); the others were stored. */
  failed: FailedFeedItem[];
}

interface PollRecordOptions {
  store: SourceStore;
  owner: string;
  clock: () => number;
  random: () => number;
  log: Log;
  metrics?: PollerMetrics;
  onStored?: (ids: string[]) => void;
  onPoll?: (report: PollReport) => void;
  /** Called once a poll is recorded, with the source's next poll time. */
  onScheduled: (source: string, nextPollAt: number) => void;
}

/** A source's state for the one-line-per-change log: `ok`, or the error kind and status. */
function stateOf(error: string | null, status: number | null): string {
  if (error === null) return 'ok';
  return `${error.split(':')[0]}${status === null ? '' : ` ${status}`}`;
}

/** The record as it was (no counters): for a poll abandoned or failed on our side. */
function unchanged(rec: SourceRecord, now: number): PollOutcome {
  return {
    at: rec.lastPollAt ? Date.parse(rec.lastPollAt) : now,
    status: rec.lastStatus,
    error: rec.lastError,
    etag: rec.etag,
    lastModified: rec.lastModified,
    nextPollAt: now,
    failures: rec.failures,
    minIntervalMs: rec.minIntervalMs,
    seen: 0,
    ingested: 0,
    deduplicated: 0,
  };
}

/** The error of a poll that threw: its class only (its message may quote what the feed sent). */
const internalError = (errClass: string) =>
  `internal: an unexpected ${errClass} in the service while polling, not a fault of the feed (the service log has where)`;

/** Failing items remembered per source, so one is logged when it starts failing, not at every poll. */
const FAILED_ITEMS_KEPT = 1000;
/** At most this many failing items are logged one by one per poll; the rest as a count. */
const FAILED_ITEMS_LOGGED = 10;

export class PollRecorder {
  private readonly states = new Map<string, string>();
  /** Per source, the guids of the items that failed at its last poll. */
  private readonly failedItems = new Map<string, Set<string>>();
  private storeState = 'ok';
  constructor(private readonly opts: PollRecordOptions) {}

  /** The state the next change of `rec` is logged against: as stored. */
  begin(rec: SourceRecord): void {
    if (!this.states.has(rec.name)) this.states.set(rec.name, stateOf(rec.lastError, rec.lastStatus));
  }

  /** The database failed (a claim, a registry read, a poll's store step): logged once until it answers. */
  storeTrouble(e: unknown): void {
    const state = `store: ${errorText(e)}`;
    if (state !== this.storeState)
      this.opts.log.warn({ err: errorText(e) }, 'the database failed; polling resumes when it answers');
    this.storeState = state;
  }

  storeAnswers(): void {
    if (this.storeState !== 'ok') {
      this.opts.log.info({}, 'the database answers again; polling resumed');
      this.storeState = 'ok';
    }
  }

  /** Records one poll of `rec` (as `unexpected` when that throws). Never throws. */
  async record(rec: SourceRecord, result: PollResult): Promise<void> {
    try {
      switch (result.kind) {
        case 'aborted':
          return await this.release(rec);
        case 'store-failed':
          // The database busy or down is retried soon; any other store error is a fault (failure schedule).
          if (failureClass(result.cause) === undefined) return await this.unexpected(rec, result.cause);
          return await this.storeFailed(rec, result.status, result.cause);
        case 'failed':
          return await this.failed(rec, result);
        case 'fetched':
          return await this.succeeded(rec, result);
      }
    } catch (e) {
      await this.unexpected(rec, e);
    }
  }

  /**
   * A poll (or its bookkeeping) that threw: a database failure is `store-failed`; anything else an `internal`
   * failure, counted and logged by class and stack, never message. Never throws: at worst the lease runs out.
   */
  async unexpected(rec: SourceRecord, e: unknown): Promise<void> {
    try {
      if (failureClass(e) !== undefined) return await this.storeFailed(rec, null, e);
      const errClass = errorClass(e);
      const outcome = this.failure(rec, this.opts.clock(), null, internalError(errClass), null);
      await this.finish(rec, outcome, 'internal', [], [], {
        kind: 'source',
        source: rec.name,
        err_class: errClass,
        stack: stackFrames(e),
      });
    } catch (again) {
      this.storeTrouble(again);
    }
  }

  /** An abandoned poll (stop, pause, remove): nothing recorded but the lease given back. */
  private async release(rec: SourceRecord): Promise<void> {
    this.opts.metrics?.sourcePolls.inc({ outcome: 'aborted' });
    await this.opts.store.recordPoll(rec.name, this.opts.owner, unchanged(rec, this.opts.clock())).catch(() => {});
  }

  /** Our side failed, not the source: validators and failure count stay (the items are read again); retried soon. */
  private async storeFailed(rec: SourceRecord, status: number | null, e: unknown): Promise<void> {
    this.opts.metrics?.sourcePolls.inc({ outcome: 'store' });
    this.storeTrouble(e);
    const now = this.opts.clock();
    await this.opts.store
      .recordPoll(rec.name, this.opts.owner, {
        ...unchanged(rec, now),
        status,
        error: `store: ${errorText(e)}`,
        nextPollAt: now + POLL_DEFAULTS.storeRetryMs,
      })
      .catch(() => {});
  }

  private async succeeded(rec: SourceRecord, r: Extract<PollResult, { kind: 'fetched' }>): Promise<void> {
    const storedIds: string[] = [];
    const counts: Record<ItemOutcomeLabel, number> = {
      stored: 0,
      same_item: 0,
      same_url: 0,
      same_headline: 0,
      near_duplicate: 0,
      unusable: r.unusable,
      failed: r.failed.length,
    };
    for (const o of r.outcomes) {
      if (o.status === 'stored') {
        counts.stored++;
        storedIds.push(o.id);
      } else if (o.status === 'duplicate') counts[DUPLICATE_LABEL[o.reason]]++;
    }
    // New items (a new id) that were a stored story; a re-read of an item already given counts nowhere.
    const deduplicated = counts.same_url + counts.same_headline + counts.near_duplicate;
    const outcome: PollOutcome = {
      at: r.at,
      status: r.status,
      error: null,
      etag: r.etag,
      lastModified: r.lastModified,
      nextPollAt: nextPollAfterSuccess(r.at, rec.everyMs, r.minIntervalMs),
      failures: 0,
      minIntervalMs: r.minIntervalMs,
      seen: counts.stored + deduplicated + counts.unusable,
      ingested: counts.stored,
      deduplicated,
    };
    if (storedIds.length > 0) this.tell(rec, () => this.opts.onStored?.(storedIds));
    await this.finish(rec, outcome, r.notModified ? 'not_modified' : 'ok', storedIds, r.failed);
    this.tell(rec, () => {
      const m = this.opts.metrics;
      if (m) for (const k of ITEM_OUTCOME_LABELS) if (counts[k] > 0) m.sourceItems.inc({ outcome: k }, counts[k]);
      // A 304 offered no items: what failed before is still what the feed holds.
      if (!r.notModified) this.logFailedItems(rec.name, r.failed);
    });
  }

  /** Logs failed items by guid and class when they start failing (not again while they keep failing). */
  private logFailedItems(source: string, failed: readonly FailedFeedItem[]): void {
    const before = this.failedItems.get(source);
    const now = new Set<string>();
    let logged = 0;
    let more = 0;
    for (const f of failed) {
      const key = f.guid ?? '';
      if (now.size < FAILED_ITEMS_KEPT) now.add(key);
      if (before?.has(key)) continue;
      if (logged++ < FAILED_ITEMS_LOGGED) {
        this.opts.log.warn(
          { kind: 'source-item', source, guid: f.guid, err_class: f.errClass },
          'an item could not be processed (an unexpected error in the service); the other items were stored',
        );
      } else more++;
    }
    if (more > 0) this.opts.log.warn({ kind: 'source-item', source, more }, 'more items could not be processed');
    if (now.size > 0) this.failedItems.set(source, now);
    else this.failedItems.delete(source);
  }

  private async failed(rec: SourceRecord, r: Extract<PollResult, { kind: 'failed' }>): Promise<void> {
    const outcome = this.failure(rec, r.at, r.status, `${r.error}: ${r.message}`, r.retryAfterMs);
    await this.finish(rec, outcome, ERROR_LABEL[r.error], [], []);
  }

  /** One failure more, next poll on the failure schedule; validators stay (the last good copy is what we hold). */
  private failure(
    rec: SourceRecord,
    at: number,
    status: number | null,
    error: string,
    retryAfterMs: number | null,
  ): PollOutcome {
    const failures = rec.failures + 1;
    const nextPollAt = nextPollAfterFailure(at, rec.everyMs, failures, retryAfterMs, this.opts.random);
    return { ...unchanged(rec, at), at, status, error, nextPollAt, failures };
  }

  /** Writes the (bounded) record, then tells schedule, counter, log and report; nothing after the write fails it. */
  private async finish(
    rec: SourceRecord,
    unbounded: PollOutcome,
    label: PollOutcomeLabel,
    storedIds: string[],
    failed: FailedFeedItem[],
    fields?: Record<string, unknown>,
  ): Promise<void> {
    const outcome = boundedPollOutcome(unbounded);
    await this.opts.store.recordPoll(rec.name, this.opts.owner, outcome);
    this.tell(rec, () => {
      this.opts.onScheduled(rec.name, outcome.nextPollAt);
      this.opts.metrics?.sourcePolls.inc({ outcome: label });
      const before = this.states.get(rec.name) ?? 'ok';
      const now = stateOf(outcome.error, outcome.status);
      if (now !== before) {
        const next = new Date(outcome.nextPollAt).toISOString();
        if (now === 'ok') {
          this.opts.log.info({ source: rec.name, status: outcome.status, failures: rec.failures }, 'polled fine again');
        } else {
          const what = { source: rec.name, error: outcome.error, failures: outcome.failures, next_try: next };
          this.opts.log.warn({ ...what, ...fields }, 'poll failed');
        }
        this.states.set(rec.name, now);
      }
    });
    this.tell(rec, () =>
      this.opts.onPoll?.({
        source: rec.name,
        outcome: outcome.error !== null ? 'error' : outcome.status === 304 ? 'not-modified' : 'ok',
        status: outcome.status,
        error: outcome.error,
        seen: outcome.seen,
        ingested: outcome.ingested,
        deduplicated: outcome.deduplicated,
        failures: outcome.failures,
        nextPollAt: outcome.nextPollAt,
        storedIds,
        failed,
      }),
    );
  }

  /** A step after the record: its error is logged by class, never the poll's failure. */
  private tell(rec: SourceRecord, step: () => void): void {
    try {
      step();
    } catch (e) {
      try {
        this.opts.log.warn(
          { kind: 'source', source: rec.name, err_class: errorClass(e), stack: stackFrames(e) },
          "a step after the poll's record failed (an unexpected error)",
        );
      } catch {
        // nothing left to tell it with
      }
    }
  }
}
