/**
 * The source poller: claims the sources that are due (by lease, so with several instances exactly one
 * polls each source at a time), fetches each feed with its stored validators (a 304 costs nothing),
 * parses it, stores the new items through the pipeline (dedup, enrichment, one transaction) and records
 * the outcome with the next poll time. Runs inside `fns serve` and alone as `fns sources run`.
 *
 * Scheduling: a success polls again after max(every, the feed's own ttl / sy:updatePeriod floor); an
 * error after `backoffMs` (exponential from the source's interval, with jitter; a `Retry-After` wins when
 * longer). Up to `concurrency` polls run at once, each bounded by the HTTP timeouts below, so a slow or
 * failing source never delays the others. Registry changes (add, pause, resume, remove) are seen within
 * `registryCheckMs` (a paused or removed source's poll in flight is abandoned).
 *
 * Every HTTP setting of the poller is in POLL_HTTP (one place; docs/sources.md quotes it).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { backoffMs, fetchFeed, FeedError, type FetchOptions, type FetchResult, type Validators } from './feed/index.js';
import { prepareFeedItems } from './off-thread.js';
import { storeOffers, type LineOutcome } from '../ingest/pipeline.js';
import type { PollOutcome, SourceRecord, SourceStore } from '../store/ports/index.js';

/** The HTTP behaviour of the poller: timeouts, caps. The User-Agent is built by `pollerUserAgent`. */
export const POLL_HTTP = {
  /** Connecting (DNS, TCP, TLS) may take this long. */
  connectTimeoutMs: 5_000,
  /** The whole request, body included. */
  timeoutMs: 20_000,
  /** A larger body is refused (`too-large`) without reading the rest. */
  maxBytes: 5 * 1024 * 1024,
  /** More redirects than this in a row is an error (`redirects`). */
  maxRedirects: 5,
} as const;

export const POLL_DEFAULTS = {
  /** Sources polled at the same time by one process. */
  concurrency: 8,
  /** A claimed source is this process's for this long: a bit longer than the whole fetch may take, plus parse and store. */
  leaseMs: POLL_HTTP.timeoutMs + 15_000,
  /** The schedule is read at least this often (sources polled by other instances, expired leases). */
  tickMs: 1_000,
  /** The registry version is read this often: an add, pause, resume or remove is seen within it. */
  registryCheckMs: 250,
  /** Backoff never waits longer than this (unless the source's own interval is longer)... */
  backoffMaxMs: 30 * 60_000,
  /** ...but a server's Retry-After is obeyed up to this. */
  retryAfterMaxMs: 6 * 3600_000,
  /** A feed's ttl / sy:updatePeriod floor is honoured up to this. */
  feedFloorMaxMs: 24 * 3600_000,
  /** After the store failed (e.g. busy), the same poll is tried again this soon. */
  storeRetryMs: 2_000,
  /** Dedup records older than this are dropped (the issue's "at least 30 days"). */
  seenRetentionMs: 30 * 24 * 3600_000,
  /** ...checked this often. */
  pruneEveryMs: 3600_000,
} as const;

const PACKAGE_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0';
  }
})();

/** `FinancialNewsService/0.1.0 (fns; feed poller)`: the service, its version and the brand. */
export function pollerUserAgent(brand: string, version: string = PACKAGE_VERSION): string {
  return `FinancialNewsService/${version} (${brand}; feed poller)`;
}

/** A process-wide id for leases: host, pid and a random part (two pollers in one process differ too). */
export function pollerOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** When a source is polled next after a success: its interval, or the feed's own floor when longer (capped). */
export function nextPollAfterSuccess(now: number, everyMs: number, minIntervalMs: number | null): number {
  const floor = Math.min(minIntervalMs ?? 0, POLL_DEFAULTS.feedFloorMaxMs);
  return now + Math.max(everyMs, floor);
}

/**
 * When a source is polled next after its `failures`-th consecutive failure: exponential backoff from its
 * interval with jitter (never sooner than the interval), capped; a Retry-After (capped) wins when longer.
 */
export function nextPollAfterFailure(
  now: number,
  everyMs: number,
  failures: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  const retryAfter = retryAfterMs === null ? null : Math.min(Math.max(0, retryAfterMs), POLL_DEFAULTS.retryAfterMaxMs);
  const delay = backoffMs(failures, { baseMs: everyMs, maxMs: Math.max(everyMs, POLL_DEFAULTS.backoffMaxMs), retryAfterMs: retryAfter, random });
  return now + Math.max(everyMs, delay, retryAfter ?? 0);
}

export type FetchFn = (url: string, validators: Validators, opts: FetchOptions) => Promise<FetchResult>;

/** Labels of the poll and item counters (bounded). */
export type PollOutcomeLabel = 'ok' | 'not_modified' | 'store' | 'aborted' | 'http' | 'timeout' | 'network' | 'parse' | 'charset' | 'too_large' | 'redirects';
export type ItemOutcomeLabel = 'stored' | 'same_item' | 'same_url' | 'same_headline' | 'near_duplicate' | 'unusable';

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

export interface PollerOptions {
  store: SourceStore;
  /** Default pollerUserAgent('fns'). */
  userAgent?: string;
  owner?: string;
  clock?: () => number;
  fetch?: FetchFn;
  /** Jitter source for the backoff. */
  random?: () => number;
  concurrency?: number;
  leaseMs?: number;
  tickMs?: number;
  registryCheckMs?: number;
  http?: Partial<Pick<FetchOptions, 'connectTimeoutMs' | 'timeoutMs' | 'maxBytes' | 'maxRedirects'>>;
  /** Called after a poll stored at least one article (the service wakes its stream with it). */
  onStored?: (ids: string[]) => void;
  /** Called after every poll. */
  onPoll?: (report: PollReport) => void;
  /** One line per change of a source's state (failing with a new kind of error, recovered), not per poll. */
  log?: (m: string) => void;
  metrics?: PollerMetrics;
}

interface InFlight {
  abort: AbortController;
  done: Promise<void>;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The state a source is in, for the "one line per change" log: `ok`, or the error kind and status. */
function stateOf(error: string | null, status: number | null): string {
  if (error === null) return 'ok';
  return `${error.split(':')[0]}${status === null ? '' : ` ${status}`}`;
}

export class SourcePoller {
  readonly owner: string;
  private readonly store: SourceStore;
  private readonly clock: () => number;
  private readonly fetch: FetchFn;
  private readonly random: () => number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly registryCheckMs: number;
  private readonly fetchOptions: Omit<FetchOptions, 'signal'>;
  private readonly log: (m: string) => void;

  private running = false;
  private readonly inFlight = new Map<string, InFlight>();
  /** Next poll time of the sources this process polled (its timer fires for the earliest). */
  private readonly known = new Map<string, number>();
  /** The last logged state per source. */
  private readonly states = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private registryTimer: NodeJS.Timeout | undefined;
  private cycling: Promise<void> | undefined;
  private again = false;
  private version: number | undefined;
  private storeState = 'ok';
  private lastPrune = 0;

  constructor(private readonly opts: PollerOptions) {
    this.store = opts.store;
    this.owner = opts.owner ?? pollerOwnerId();
    this.clock = opts.clock ?? Date.now;
    this.fetch = opts.fetch ?? fetchFeed;
    this.random = opts.random ?? Math.random;
    this.concurrency = Math.max(1, opts.concurrency ?? POLL_DEFAULTS.concurrency);
    this.leaseMs = opts.leaseMs ?? POLL_DEFAULTS.leaseMs;
    this.tickMs = opts.tickMs ?? POLL_DEFAULTS.tickMs;
    this.registryCheckMs = Math.min(opts.registryCheckMs ?? POLL_DEFAULTS.registryCheckMs, 1000);
    this.fetchOptions = { userAgent: opts.userAgent ?? pollerUserAgent('fns'), ...POLL_HTTP, ...opts.http };
    this.log = opts.log ?? (() => {});
  }

  /** Polls in flight now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Starts polling: claims what is due at once, then keeps to the schedule until stop(). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.version = await this.store.registryVersion().catch(() => undefined);
    this.watchRegistry();
    this.wake();
    await this.cycling;
  }

  /** Stops claiming, abandons the polls in flight (their leases are released) and waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.registryTimer) clearTimeout(this.registryTimer);
    this.timer = this.registryTimer = undefined;
    for (const f of this.inFlight.values()) f.abort.abort();
    await this.cycling;
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
  }

  /** Claims due sources now instead of at the next tick (coalesced). */
  wake(): void {
    if (!this.running) return;
    if (this.cycling) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.cycling = this.cycle()
      .catch((e: unknown) => this.storeTrouble(e))
      .finally(() => {
        this.cycling = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.schedule();
      });
  }

  /** The timer: the earliest next poll this process knows of, and at most `tickMs` away. */
  private schedule(): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    const now = this.clock();
    let delay = this.tickMs;
    for (const [name, at] of this.known) if (!this.inFlight.has(name)) delay = Math.min(delay, at - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, Math.max(0, delay));
    this.timer.unref?.();
  }

  private watchRegistry(): void {
    if (!this.running) return;
    this.registryTimer = setTimeout(async () => {
      try {
        const v = await this.store.registryVersion();
        if (v !== this.version) {
          this.version = v;
          await this.abandonUnwanted();
          this.wake();
        }
      } catch (e) {
        this.storeTrouble(e);
      }
      this.watchRegistry();
    }, this.registryCheckMs);
    this.registryTimer.unref?.();
  }

  /** A poll in flight of a source that was paused or removed meanwhile is abandoned. */
  private async abandonUnwanted(): Promise<void> {
    for (const [name, f] of this.inFlight) {
      const rec = await this.store.getSource(name);
      if (!rec || rec.paused) {
        f.abort.abort();
        this.known.delete(name);
      }
    }
  }

  private storeTrouble(e: unknown): void {
    const state = `store: ${message(e)}`;
    if (state !== this.storeState) this.log(`sources: the database failed (${message(e)}); polling resumes when it answers`);
    this.storeState = state;
  }

  private async cycle(): Promise<void> {
    const now = this.clock();
    const free = this.concurrency - this.inFlight.size;
    if (free > 0) {
      const claimed = await this.store.claimDueSources(this.owner, now, this.leaseMs, free);
      if (this.storeState !== 'ok') {
        this.log('sources: the database answers again; polling resumed');
        this.storeState = 'ok';
      }
      for (const rec of claimed) this.launch(rec);
      // What was due has been claimed now (here or by another instance, or it was paused): forget it.
      for (const [name, at] of this.known) if (at <= now && !this.inFlight.has(name)) this.known.delete(name);
    }
    if (now - this.lastPrune >= POLL_DEFAULTS.pruneEveryMs) {
      this.lastPrune = now;
      await this.store.pruneSeenItems(POLL_DEFAULTS.seenRetentionMs, now).catch((e: unknown) => this.storeTrouble(e));
    }
  }

  private launch(rec: SourceRecord): void {
    if (this.inFlight.has(rec.name)) return;
    if (!this.states.has(rec.name)) this.states.set(rec.name, stateOf(rec.lastError, rec.lastStatus));
    const abort = new AbortController();
    const done = this.poll(rec, abort.signal)
      .catch((e: unknown) => this.log(`sources: ${rec.name}: poll failed unexpectedly: ${(e as Error)?.stack ?? String(e)}`))
      .finally(() => {
        this.inFlight.delete(rec.name);
        // A slot is free: claim what is due.
        this.wake();
      });
    this.inFlight.set(rec.name, { abort, done });
  }

  /** One poll of one claimed source, from fetch to recordPoll. */
  private async poll(rec: SourceRecord, signal: AbortSignal): Promise<void> {
    const validators: Validators = { etag: rec.etag, lastModified: rec.lastModified };
    const result = await this.fetch(rec.url, validators, { ...this.fetchOptions, signal });
    if (signal.aborted) return this.release(rec);
    const at = this.clock();
    if (result.kind === 'error') return this.failed(rec, at, result.status, `${result.error}: ${result.message}`, result.retryAfterMs, result.error);
    if (result.kind === 'not-modified') {
      return this.succeeded(rec, at, 304, 'not_modified', {
        etag: result.validators.etag ?? rec.etag,
        lastModified: result.validators.lastModified ?? rec.lastModified,
        minIntervalMs: rec.minIntervalMs,
        outcomes: [],
        unusable: 0,
      });
    }
    let feed, items;
    try {
      // A large body is parsed, mapped and enriched on a worker thread, and the store works in slices on
      // its own: no step of a poll holds the event loop for more than a few ms, whatever the feed
      // (docs/sources.md).
      ({ feed, items } = await prepareFeedItems(result.body, { contentType: result.contentType, baseUrl: result.finalUrl }, { name: rec.name, urgency: rec.urgency }));
    } catch (e) {
      if (!(e instanceof FeedError)) throw e;
      return this.failed(rec, at, result.status, `${e.kind}: ${e.message}`, null, e.kind);
    }
    if (signal.aborted) return this.release(rec);
    let outcomes: LineOutcome[];
    try {
      // The pipeline's store step, as push and `fns articles ingest` take it (one transaction per poll).
      outcomes = items.length > 0 ? (await storeOffers(items.map((item, i) => ({ line: i + 1, item })), this.store, this.clock)).results : [];
    } catch (e) {
      // Our side failed, not the source: its validators stay as they were (the next poll reads the
      // items again), its failure count too; tried again soon.
      this.opts.metrics?.sourcePolls.inc({ outcome: 'store' });
      this.storeTrouble(e);
      const now = this.clock();
      await this.store
        .recordPoll(rec.name, this.owner, {
          ...this.unchanged(rec, now),
          status: result.status,
          error: `store: ${message(e)}`,
          nextPollAt: now + POLL_DEFAULTS.storeRetryMs,
        })
        .catch(() => {});
      return;
    }
    const minIntervalMs = feed.minIntervalSeconds === null ? null : feed.minIntervalSeconds * 1000;
    return this.succeeded(rec, this.clock(), result.status, 'ok', {
      etag: result.validators.etag,
      lastModified: result.validators.lastModified,
      minIntervalMs,
      outcomes,
      unusable: feed.itemCount - items.length,
    });
  }

  /** The record as it was (no counters): for a poll abandoned or failed on our side. */
  private unchanged(rec: SourceRecord, now: number): PollOutcome {
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

  /** An abandoned poll (stop, pause, remove): nothing recorded but the lease given back. */
  private async release(rec: SourceRecord): Promise<void> {
    this.opts.metrics?.sourcePolls.inc({ outcome: 'aborted' });
    await this.store.recordPoll(rec.name, this.owner, this.unchanged(rec, this.clock())).catch(() => {});
  }

  private async succeeded(
    rec: SourceRecord,
    at: number,
    status: number,
    label: 'ok' | 'not_modified',
    r: { etag: string | null; lastModified: string | null; minIntervalMs: number | null; outcomes: LineOutcome[]; unusable: number },
  ): Promise<void> {
    const storedIds: string[] = [];
    const counts: Record<ItemOutcomeLabel, number> = { stored: 0, same_item: 0, same_url: 0, same_headline: 0, near_duplicate: 0, unusable: r.unusable };
    for (const o of r.outcomes) {
      if (o.status === 'stored') {
        counts.stored++;
        storedIds.push(o.id);
      } else if (o.status === 'duplicate') counts[o.reason.replace('-', '_') as ItemOutcomeLabel]++;
    }
    // New items (a new id) that were a stored story; a re-read of an item already given counts nowhere.
    const deduplicated = counts.same_url + counts.same_headline + counts.near_duplicate;
    const outcome: PollOutcome = {
      at,
      status,
      error: null,
      etag: r.etag,
      lastModified: r.lastModified,
      nextPollAt: nextPollAfterSuccess(at, rec.everyMs, r.minIntervalMs),
      failures: 0,
      minIntervalMs: r.minIntervalMs,
      seen: counts.stored + deduplicated + counts.unusable,
      ingested: counts.stored,
      deduplicated,
    };
    if (storedIds.length > 0) this.opts.onStored?.(storedIds);
    await this.finish(rec, outcome, label, storedIds);
    const m = this.opts.metrics;
    if (m) for (const [k, n] of Object.entries(counts)) if (n > 0) m.sourceItems.inc({ outcome: k as ItemOutcomeLabel }, n);
  }

  private async failed(
    rec: SourceRecord,
    at: number,
    status: number | null,
    error: string,
    retryAfterMs: number | null,
    kind: FeedError['kind'],
  ): Promise<void> {
    const failures = rec.failures + 1;
    await this.finish(
      rec,
      {
        at,
        status,
        error,
        // Validators stay: the last good copy is still what we hold.
        etag: rec.etag,
        lastModified: rec.lastModified,
        nextPollAt: nextPollAfterFailure(at, rec.everyMs, failures, retryAfterMs, this.random),
        failures,
        minIntervalMs: rec.minIntervalMs,
        seen: 0,
        ingested: 0,
        deduplicated: 0,
      },
      kind.replace('-', '_') as PollOutcomeLabel,
      [],
    );
  }

  private async finish(rec: SourceRecord, outcome: PollOutcome, label: PollOutcomeLabel, storedIds: string[]): Promise<void> {
    await this.store.recordPoll(rec.name, this.owner, outcome);
    this.known.set(rec.name, outcome.nextPollAt);
    this.opts.metrics?.sourcePolls.inc({ outcome: label });
    const before = this.states.get(rec.name) ?? 'ok';
    const now = stateOf(outcome.error, outcome.status);
    if (now !== before) {
      const next = new Date(outcome.nextPollAt).toISOString();
      if (now === 'ok') this.log(`sources: ${rec.name}: polled fine again (HTTP ${outcome.status}) after ${rec.failures} failure(s)`);
      else this.log(`sources: ${rec.name}: ${outcome.error}; failure ${outcome.failures}, next try ${next}`);
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
