/**
 * The poller's bookkeeping: what a poll did becomes the source's record (its validators, failure count
 * and next poll time: `recordPoll`, which also gives the lease back), the counters, the progress report,
 * and one log line per change of a source's state (failing with a new kind of error, recovered; the
 * database failing and answering again), not one per poll.
 */
import type { FeedErrorKind } from './feed/index.js';
import { nextPollAfterFailure, nextPollAfterSuccess, POLL_DEFAULTS } from './poll-rules.js';
import type { PollResult } from './poll.js';
import type { DuplicateReason, PollOutcome, SourceRecord, SourceStore } from '../store/ports/index.js';

/** Labels of the poll and item counters (bounded). */
export type PollOutcomeLabel = 'ok' | 'not_modified' | 'store' | 'aborted' | 'http' | 'timeout' | 'network' | 'parse' | 'charset' | 'too_large' | 'redirects';
const ITEM_OUTCOME_LABELS = ['stored', 'same_item', 'same_url', 'same_headline', 'near_duplicate', 'unusable'] as const;
export type ItemOutcomeLabel = (typeof ITEM_OUTCOME_LABELS)[number];

/** The counter label of each kind of feed error (every kind has one: the compiler checks it). */
const ERROR_LABEL: Record<FeedErrorKind, PollOutcomeLabel> = {
  parse: 'parse',
  charset: 'charset',
  'too-large': 'too_large',
  http: 'http',
  timeout: 'timeout',
  redirects: 'redirects',
  network: 'network',
};

/** The counter label of each duplicate reason. */
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

/** What one poll did (for progress lines and tests). */
export interface PollReport {
  source: string;
  outcome: 'ok' | 'not-modified' | 'error';
  status: number | null;
  /** `<kind>: <message>` for an error (as `fns sources list` shows it), else null. */
  error: string | null;
  /** New items offered: ingested + deduplicated + unusable (no text). */
  seen: number;
  ingested: number;
  deduplicated: number;
  failures: number;
  nextPollAt: number;
  /** Ids of the stored articles, in feed order. */
  storedIds: string[];
}

export interface PollRecordOptions {
  store: SourceStore;
  /** The lease owner (the poller's id). */
  owner: string;
  clock: () => number;
  /** Jitter source for the backoff. */
  random: () => number;
  log: (m: string) => void;
  metrics?: PollerMetrics;
  /** Called after a poll stored at least one article. */
  onStored?: (ids: string[]) => void;
  /** Called after every recorded poll. */
  onPoll?: (report: PollReport) => void;
  /** Called once a poll is recorded, with the source's next poll time (the scheduler's timer). */
  onScheduled: (source: string, nextPollAt: number) => void;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The state a source is in, for the "one line per change" log: `ok`, or the error kind and status. */
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

export class PollRecorder {
  /** The last logged state per source. */
  private readonly states = new Map<string, string>();
  private storeState = 'ok';

  constructor(private readonly opts: PollRecordOptions) {}

  /** A poll of `rec` starts: its state as stored is the one the next change is logged against. */
  begin(rec: SourceRecord): void {
    if (!this.states.has(rec.name)) this.states.set(rec.name, stateOf(rec.lastError, rec.lastStatus));
  }

  /** The database failed (a claim, a registry read, a poll's store step): logged once until it answers. */
  storeTrouble(e: unknown): void {
    const state = `store: ${message(e)}`;
    if (state !== this.storeState) this.opts.log(`sources: the database failed (${message(e)}); polling resumes when it answers`);
    this.storeState = state;
  }

  /** The database answered. */
  storeAnswers(): void {
    if (this.storeState !== 'ok') {
      this.opts.log('sources: the database answers again; polling resumed');
      this.storeState = 'ok';
    }
  }

  /** Records what one poll of `rec` did. */
  async record(rec: SourceRecord, result: PollResult): Promise<void> {
    switch (result.kind) {
      case 'aborted':
        return this.release(rec);
      case 'store-failed':
        return this.storeFailed(rec, result.status, result.cause);
      case 'failed':
        return this.failed(rec, result);
      case 'fetched':
        return this.succeeded(rec, result);
    }
  }

  /** An abandoned poll (stop, pause, remove): nothing recorded but the lease given back. */
  private async release(rec: SourceRecord): Promise<void> {
    this.opts.metrics?.sourcePolls.inc({ outcome: 'aborted' });
    await this.opts.store.recordPoll(rec.name, this.opts.owner, unchanged(rec, this.opts.clock())).catch(() => {});
  }

  /**
   * Our side failed, not the source: its validators stay as they were (the next poll reads the items
   * again), its failure count too; tried again soon.
   */
  private async storeFailed(rec: SourceRecord, status: number, e: unknown): Promise<void> {
    this.opts.metrics?.sourcePolls.inc({ outcome: 'store' });
    this.storeTrouble(e);
    const now = this.opts.clock();
    await this.opts.store
      .recordPoll(rec.name, this.opts.owner, {
        ...unchanged(rec, now),
        status,
        error: `store: ${message(e)}`,
        nextPollAt: now + POLL_DEFAULTS.storeRetryMs,
      })
      .catch(() => {});
  }

  private async succeeded(rec: SourceRecord, r: Extract<PollResult, { kind: 'fetched' }>): Promise<void> {
    const storedIds: string[] = [];
    const counts: Record<ItemOutcomeLabel, number> = { stored: 0, same_item: 0, same_url: 0, same_headline: 0, near_duplicate: 0, unusable: r.unusable };
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
    if (storedIds.length > 0) this.opts.onStored?.(storedIds);
    await this.finish(rec, outcome, r.notModified ? 'not_modified' : 'ok', storedIds);
    const m = this.opts.metrics;
    if (m) for (const k of ITEM_OUTCOME_LABELS) if (counts[k] > 0) m.sourceItems.inc({ outcome: k }, counts[k]);
  }

  private async failed(rec: SourceRecord, r: Extract<PollResult, { kind: 'failed' }>): Promise<void> {
    const failures = rec.failures + 1;
    await this.finish(
      rec,
      {
        at: r.at,
        status: r.status,
        error: `${r.error}: ${r.message}`,
        // Validators stay: the last good copy is still what we hold.
        etag: rec.etag,
        lastModified: rec.lastModified,
        nextPollAt: nextPollAfterFailure(r.at, rec.everyMs, failures, r.retryAfterMs, this.opts.random),
        failures,
        minIntervalMs: rec.minIntervalMs,
        seen: 0,
        ingested: 0,
        deduplicated: 0,
      },
      ERROR_LABEL[r.error],
      [],
    );
  }

  private async finish(rec: SourceRecord, outcome: PollOutcome, label: PollOutcomeLabel, storedIds: string[]): Promise<void> {
    await this.opts.store.recordPoll(rec.name, this.opts.owner, outcome);
    this.opts.onScheduled(rec.name, outcome.nextPollAt);
    this.opts.metrics?.sourcePolls.inc({ outcome: label });
    const before = this.states.get(rec.name) ?? 'ok';
    const now = stateOf(outcome.error, outcome.status);
    if (now !== before) {
      const next = new Date(outcome.nextPollAt).toISOString();
      if (now === 'ok') this.opts.log(`sources: ${rec.name}: polled fine again (HTTP ${outcome.status}) after ${rec.failures} failure(s)`);
      else this.opts.log(`sources: ${rec.name}: ${outcome.error}; failure ${outcome.failures}, next try ${next}`);
      this.states.set(rec.name, now);
    }
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
    });
  }
}
