/**
 * The webhook dispatcher: delivers each article of the change feed to every active endpoint this instance
 * leases, one request at a time per endpoint, in article order. At least once: an endpoint's cursor (its
 * whole backlog, in the store) passes an article only after a 2xx; successes are written every `flushMs`
 * (a crash re-sends at most that much, same webhook-id), failures at once, retried per schedule.ts (410
 * disables). Each endpoint has its own loop, so a slow one delays no other, nor the stream. Leases are
 * renewed every `refreshMs` (a dead instance's endpoints are taken over after `leaseMs`); the tier is
 * re-checked every `recheckMs`, and an endpoint whose plan lost webhooks or its ticker filter is paused.
 */
import { errorText, type Log } from '../domain/log.js';
import pLimit, { type LimitFunction } from 'p-limit';
import { randomUUID } from 'node:crypto';
import { webhookRules, type Tier } from '../contract/index.js';
import { effectiveTier } from '../domain/tiers.js';
import { signingSecrets } from '../domain/webhook-secrets.js';
import {
  FeedPoller,
  matchesTickers,
  PresentationCache,
  RecentFeed,
  tickerFilter,
  type TickerFilter,
} from '../delivery/index.js';
import type { FeedEntry, Store, WebhookAttempt, WebhookEndpoint } from '../store/ports/index.js';
import { resolveDestination, systemLookup, DestinationError, type Lookup } from './address.js';
import { messageId, webhookBody } from './message.js';
import { pauseForPlan } from './plan.js';
import { CONTRACT_RETRY_RULES, nextRetry, type RetryRules } from './schedule.js';
import type { SecretBox } from './secrets.js';
import { httpSender, type Sender } from './sender.js';
import { signedHeaders } from './signing.js';

export type DispatchStore = Pick<Store, 'accounts' | 'articles' | 'webhooks' | 'transaction'>;

export type AttemptOutcome = 'delivered' | 'failed' | 'disabled' | 'paused';

/** One line per attempt (never a secret). */
export interface AttemptEvent {
  endpointId: string;
  webhookId: string;
  status: number | null;
  error: string | null;
  latencyMs: number;
  outcome: AttemptOutcome;
  /** Seconds from the article's received_at to the end of this attempt. */
  ageSeconds: number;
}

export interface DispatcherOptions {
  store: DispatchStore;
  secrets: SecretBox;
  allowPrivate: boolean;
  /** Subscription re-check (STREAM_RECHECK_MS, as the stream). */
  recheckMs: number;
  clock?: () => number;
  random?: () => number;
  lookup?: Lookup;
  send?: Sender;
  owner?: string;
  leaseMs?: number;
  refreshMs?: number;
  feedPollMs?: number;
  flushMs?: number;
  /** Requests in flight across every endpoint of this instance. */
  maxInFlight?: number;
  timeoutMs?: number;
  retryRules?: RetryRules;
  /** Endpoints one instance holds at most. */
  maxEndpoints?: number;
  /** Registers a wake-up (LISTEN/NOTIFY, the data directory watch); returns its removal. */
  feedWake?: (wake: () => void) => () => void;
  onAttempt?: (e: AttemptEvent) => void;
  log: Log;
}

export const DISPATCH_DEFAULTS = {
  leaseMs: 15_000,
  refreshMs: 2_000,
  feedPollMs: 1_000,
  flushMs: 1_000,
  maxInFlight: 256,
  maxEndpoints: 10_000,
};
/** A destination's checked address is used this long before its name is resolved and checked again. */
const ADDRESS_TTL_MS = 30_000;
/** Articles a worker reads per page (shared in memory through RecentFeed). */
const PAGE = 100;

interface Pending {
  /** The article the endpoint is stuck on (for the oldest-undelivered metric). */
  receivedAt: number;
}

class EndpointWorker {
  e: WebhookEndpoint;
  cursor: number;
  /** A successful cursor not yet written. */
  dirty = false;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  stopped = false;
  private tier: { tier: Tier; at: number } | undefined;
  pending: Pending | undefined;
  /** When (performance.now()) this worker's last write completed. */
  private recordedAt = 0;

  constructor(
    private readonly d: WebhookDispatcher,
    e: WebhookEndpoint,
  ) {
    this.e = e;
    this.cursor = e.cursor;
  }

  /**
   * Adopts the store's settings after a lease renewal; the delivery state stays this worker's, except an
   * operator's `resume` of an endpoint waiting for a retry, which is tried again at once.
   */
  update(e: WebhookEndpoint, readStartedAt: number): void {
    this.e = { ...this.e, url: e.url, tickers: e.tickers, minRelevance: e.minRelevance, secrets: e.secrets };
    const resumed = e.failures === 0 && e.nextAttemptAt === null && this.e.failures > 0;
    if (resumed && !this.running && readStartedAt > this.recordedAt) {
      this.e = { ...this.e, failures: 0, firstFailureAt: null, nextAttemptAt: null };
      this.kick();
    }
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.run()
      .catch((err: unknown) => {
        this.d.opts.log.warn(
          { endpoint: this.e.id, err: errorText(err), retryMs: this.d.refreshMs },
          'endpoint run failed; retrying',
        );
        this.later(this.d.refreshMs);
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private later(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.kick();
      },
      Math.max(0, ms),
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private async currentTier(now: number): Promise<Tier | undefined> {
    if (this.tier && now - this.tier.at < this.d.opts.recheckMs) return this.tier.tier;
    const account = await this.d.opts.store.accounts.getAccount(this.e.accountId);
    if (!account) return undefined;
    this.tier = { tier: effectiveTier(account, now), at: now };
    return this.tier.tier;
  }

  private attempt(over: Partial<WebhookAttempt> & { at: number }): WebhookAttempt {
    return {
      cursor: this.cursor,
      status: null,
      error: null,
      ok: null,
      failures: this.e.failures,
      firstFailureAt: this.e.firstFailureAt,
      nextAttemptAt: this.e.nextAttemptAt,
      state: 'active',
      pausedReason: null,
      ...over,
    };
  }

  private resolved: { href: string; url: URL; address: { address: string; family: number }; at: number } | undefined;

  /** The URL and the checked address every request goes to; resolved again after ADDRESS_TTL_MS or a URL change. */
  private async destination(d: WebhookDispatcher): Promise<{ url: URL; address: { address: string; family: number } }> {
    const now = performance.now();
    if (this.resolved && this.resolved.href === this.e.url && now - this.resolved.at < ADDRESS_TTL_MS)
      return this.resolved;
    this.resolved = undefined;
    const url = new URL(this.e.url);
    const address = await resolveDestination(url, d.opts.allowPrivate, d.lookup);
    this.resolved = { href: this.e.url, url, address, at: now };
    return this.resolved;
  }

  /** Writes now; a lost lease stops the worker. */
  private async record(a: WebhookAttempt): Promise<boolean> {
    const held = await this.d.opts.store.webhooks.recordAttempt(this.e.id, this.d.owner, a);
    this.recordedAt = performance.now();
    if (a.cursor !== null && a.cursor >= this.cursor) this.dirty = false;
    if (!held) {
      this.d.opts.log.info({ endpoint: this.e.id }, 'lease lost to another instance; stopping here');
      this.d.drop(this.e.id);
    }
    return held;
  }

  private async run(): Promise<void> {
    const clock = this.d.clock;
    for (;;) {
      if (this.stopped) return;
      const now = clock();
      if (this.e.nextAttemptAt !== null && this.e.nextAttemptAt > now) {
        this.later(this.e.nextAttemptAt - now);
        return;
      }
      const tier = await this.currentTier(now);
      const reason = tier === undefined ? 'the account no longer exists' : pauseForPlan(tier, this.e.tickers);
      if (tier === undefined || reason !== null) {
        this.d.opts.log.warn({ endpoint: this.e.id, reason }, 'endpoint paused');
        await this.record(this.attempt({ at: now, state: 'paused', pausedReason: reason }));
        this.d.drop(this.e.id);
        return;
      }
      const page = await this.d.feed.after(this.cursor, PAGE);
      if (page.length === 0) {
        this.pending = undefined;
        return;
      }
      // The stream's ticker filter (an endpoint with one is held only while its account is on max: above).
      const filter: TickerFilter | undefined = tickerFilter(this.e.tickers, this.e.minRelevance);
      for (const entry of page) {
        if (this.stopped) return;
        if (!matchesTickers(entry.article, filter)) {
          this.cursor = entry.seq;
          this.dirty = true;
          continue;
        }
        const delivered = await this.deliver(entry, tier);
        if (!delivered) return;
      }
      if (this.dirty) this.d.markDirty(this);
    }
  }

  /** One attempt at one article; true when the endpoint may go on to the next one. */
  private async deliver(entry: FeedEntry, tier: Tier): Promise<boolean> {
    const receivedAt = Date.parse(entry.article.received_at);
    this.pending = { receivedAt };
    const msgId = messageId(this.e.id, entry.article.id);
    const sent = await this.send(entry, tier, msgId);
    // Cut short by a stop: not a failure of the endpoint; the next holder sends it again.
    if (sent === undefined) return false;
    const at = this.d.clock();
    const event = (outcome: AttemptOutcome) =>
      this.d.opts.onAttempt?.({
        endpointId: this.e.id,
        webhookId: msgId,
        ...sent,
        outcome,
        ageSeconds: Math.max(0, (at - receivedAt) / 1000),
      });
    if (sent.status !== null && sent.status >= 200 && sent.status < 300) {
      event('delivered');
      return this.succeeded(entry, sent.status, at);
    }
    if (sent.status === 410) {
      event('disabled');
      return this.gone(sent, at);
    }
    return this.failed(sent, at, event);
  }

  /** The signed request (undefined: cut short by a stop). */
  private async send(entry: FeedEntry, tier: Tier, msgId: string): Promise<Sent | undefined> {
    const d = this.d;
    const body = d.bodyOf(entry, tier);
    if (Buffer.byteLength(body) > webhookRules.bodyMaxBytes)
      return { status: null, error: `body larger than ${webhookRules.bodyMaxBytes} bytes`, latencyMs: 0 };
    const now = d.clock();
    const valid = signingSecrets(this.e.secrets, now).map((s) => d.opts.secrets.open(s.secret));
    try {
      const { url, address } = await this.destination(d);
      const headers = signedHeaders(valid, msgId, Math.floor(now / 1000), body);
      const r = await d.inFlight(() =>
        d.send({ url, address, headers, body, timeoutMs: d.timeoutMs, signal: d.stopping.signal }),
      );
      if (d.stopping.signal.aborted) return undefined;
      return { status: r.status, error: r.error, latencyMs: r.latencyMs };
    } catch (e) {
      const error =
        e instanceof DestinationError
          ? `refused destination: ${e.message}`
          : e instanceof Error
            ? e.message
            : String(e);
      return { status: null, error, latencyMs: 0 };
    }
  }

  private async succeeded(entry: FeedEntry, status: number, at: number): Promise<boolean> {
    this.cursor = entry.seq;
    this.dirty = true;
    this.pending = undefined;
    const recovered = this.e.failures > 0;
    this.e = {
      ...this.e,
      failures: 0,
      firstFailureAt: null,
      nextAttemptAt: null,
      lastSuccessAt: at,
      lastStatus: status,
    };
    // After a failure run, written at once (`webhooks list` shows the recovery); otherwise batched.
    if (recovered)
      return this.record(
        this.attempt({ at, status, ok: true, failures: 0, firstFailureAt: null, nextAttemptAt: null }),
      );
    this.d.markDirty(this);
    return true;
  }

  private async gone({ status, error }: Sent, at: number): Promise<boolean> {
    await this.record(
      this.attempt({ at, status, error, ok: false, state: 'disabled', pausedReason: 'the receiver answered 410 Gone' }),
    );
    this.d.opts.log.warn({ endpoint: this.e.id, status: 410 }, 'endpoint disabled: the receiver answered 410 Gone');
    this.d.drop(this.e.id);
    return false;
  }

  /** A failed attempt: retried later (retry rules), or the endpoint paused once they give up. */
  private async failed({ status, error }: Sent, at: number, event: (o: AttemptOutcome) => void): Promise<boolean> {
    const d = this.d;
    const failures = this.e.failures + 1;
    const first = this.e.firstFailureAt ?? at;
    const decision = nextRetry(failures, first, at, d.random, d.retryRules);
    if (!decision.retry) {
      event('paused');
      const reason = `${decision.reason}; last error: ${error ?? `HTTP ${status}`}`;
      await this.record(
        this.attempt({
          at,
          status,
          error,
          ok: false,
          failures,
          firstFailureAt: first,
          nextAttemptAt: null,
          state: 'paused',
          pausedReason: reason,
        }),
      );
      d.opts.log.warn({ endpoint: this.e.id, reason }, 'endpoint paused');
      d.drop(this.e.id);
      return false;
    }
    event('failed');
    this.e = {
      ...this.e,
      failures,
      firstFailureAt: first,
      nextAttemptAt: decision.at,
      lastError: error,
      lastStatus: status,
    };
    const written = await this.record(
      this.attempt({ at, status, error, ok: false, failures, firstFailureAt: first, nextAttemptAt: decision.at }),
    );
    if (written) this.later(decision.at - d.clock());
    return false;
  }
}

/** What one attempt got back: an HTTP status, or an error without one. */
interface Sent {
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export class WebhookDispatcher {
  readonly owner: string;
  readonly clock: () => number;
  readonly random: () => number;
  readonly lookup: Lookup;
  readonly send: Sender;
  readonly timeoutMs: number;
  readonly retryRules: RetryRules;
  readonly refreshMs: number;
  /** At most `maxInFlight` requests on the wire at once, across every endpoint. */
  readonly inFlight: LimitFunction;
  readonly feed: RecentFeed;
  /** Aborted by `stop()`: requests in flight end at once instead of waiting for their answer. */
  readonly stopping = new AbortController();
  private readonly poller: FeedPoller;
  private readonly workers = new Map<string, EndpointWorker>();
  private readonly dirty = new Set<EndpointWorker>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private refreshing: Promise<void> | undefined;
  private unwake: (() => void) | undefined;
  private stopped = true;

  constructor(readonly opts: DispatcherOptions) {
    this.owner = opts.owner ?? `webhooks-${randomUUID()}`;
    this.clock = opts.clock ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.lookup = opts.lookup ?? systemLookup;
    this.send = opts.send ?? httpSender;
    this.timeoutMs = opts.timeoutMs ?? webhookRules.timeoutMs;
    this.retryRules = opts.retryRules ?? CONTRACT_RETRY_RULES;
    this.refreshMs = opts.refreshMs ?? DISPATCH_DEFAULTS.refreshMs;
    this.inFlight = pLimit(opts.maxInFlight ?? DISPATCH_DEFAULTS.maxInFlight);
    this.poller = new FeedPoller({
      articles: opts.store.articles,
      intervalMs: opts.feedPollMs ?? DISPATCH_DEFAULTS.feedPollMs,
      // With no endpoint held nothing is read (a later endpoint reads from its own cursor).
      hasListeners: () => this.workers.size > 0,
      onSkip: () => this.feed.clear(),
      deliver: (batch) => {
        this.feed.push(batch);
        for (const w of this.workers.values()) w.kick();
      },
      log: opts.log,
      label: 'webhooks',
    });
    this.feed = new RecentFeed(opts.store.articles, () => this.poller.cursor);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.poller.start();
    this.unwake = this.opts.feedWake?.(() => this.poller.wake());
    // A database that is down now is retried on the renewal timer; the service starts anyway.
    await this.refresh().catch((e: unknown) =>
      this.opts.log.warn({ err: errorText(e) }, 'claiming endpoints failed; retrying'),
    );
    const tick = () => {
      this.refreshTimer = setTimeout(() => {
        this.refreshing = this.refresh()
          .catch((e: unknown) => this.opts.log.warn({ err: errorText(e) }, 'lease renewal failed'))
          .finally(() => {
            this.refreshing = undefined;
            if (!this.stopped) tick();
          });
      }, this.refreshMs);
      this.refreshTimer.unref();
    };
    tick();
  }

  /** Bodies per article and tier (PresentationCache): many endpoints get the same bytes. */
  readonly bodies = new PresentationCache<string>((article, tier) => webhookBody(article, tier as Tier));

  bodyOf(entry: FeedEntry, tier: Tier): string {
    return this.bodies.of(entry.article, tier);
  }

  /** Reads the feed now (an article was stored by this process). */
  wake(): void {
    this.poller.wake();
  }

  /** Leases (new endpoints, renewals); workers for endpoints no longer held stop. */
  async refresh(): Promise<void> {
    if (this.stopped) return;
    const readStartedAt = performance.now();
    const held = await this.opts.store.webhooks.claim(
      this.owner,
      this.clock(),
      this.opts.leaseMs ?? DISPATCH_DEFAULTS.leaseMs,
      this.opts.maxEndpoints ?? DISPATCH_DEFAULTS.maxEndpoints,
    );
    const ids = new Set(held.map((e) => e.id));
    for (const id of [...this.workers.keys()]) if (!ids.has(id)) this.drop(id);
    for (const e of held) {
      const w = this.workers.get(e.id);
      if (w) w.update(e, readStartedAt);
      else {
        const nw = new EndpointWorker(this, e);
        this.workers.set(e.id, nw);
        nw.kick();
      }
    }
  }

  drop(id: string): void {
    const w = this.workers.get(id);
    if (!w) return;
    this.workers.delete(id);
    void w.stop();
  }

  markDirty(w: EndpointWorker): void {
    this.dirty.add(w);
    if (this.flushTimer || this.stopped) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushing = this.flush().finally(() => (this.flushing = undefined));
    }, this.opts.flushMs ?? DISPATCH_DEFAULTS.flushMs);
    this.flushTimer.unref();
  }

  /** Writes every successful cursor not yet written, in one transaction. */
  async flush(): Promise<void> {
    const batch = [...this.dirty].filter((w) => w.dirty);
    this.dirty.clear();
    if (batch.length === 0) return;
    const at = this.clock();
    const lost: string[] = [];
    try {
      await this.opts.store.transaction(async (tx) => {
        for (const w of batch) {
          const cursor = w.cursor;
          const held = await tx.webhooks.recordAttempt(w.e.id, this.owner, {
            // The time of the last 2xx, not of this write: a cursor moved only past articles the ticker filter
            // skipped sent no request, so it is no new success or attempt.
            at: w.e.lastSuccessAt ?? at,
            cursor,
            status: w.e.lastStatus,
            error: null,
            ok: w.e.lastSuccessAt !== null ? true : null,
            failures: w.e.failures,
            firstFailureAt: w.e.firstFailureAt,
            nextAttemptAt: w.e.nextAttemptAt,
            state: 'active',
            pausedReason: null,
          });
          if (!held) lost.push(w.e.id);
          else if (w.cursor === cursor) w.dirty = false;
        }
      });
    } catch (e) {
      for (const w of batch) this.markDirty(w);
      this.opts.log.warn({ err: errorText(e) }, 'writing delivery cursors failed; retrying');
      return;
    }
    for (const id of lost) this.drop(id);
  }

  /** Endpoints held, with their backlog (articles after the cursor) and the age of the oldest undelivered article. */
  async status(): Promise<{ id: string; backlog: number; oldestUndeliveredSeconds: number | null }[]> {
    const head = this.poller.cursor;
    const now = this.clock();
    return [...this.workers.values()].map((w) => ({
      id: w.e.id,
      backlog: Math.max(0, head - w.cursor),
      oldestUndeliveredSeconds: w.pending ? Math.max(0, (now - w.pending.receivedAt) / 1000) : null,
    }));
  }

  endpoints(): number {
    return this.workers.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.unwake?.();
    await this.refreshing;
    await this.poller.stop();
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.flushing;
    for (const w of this.workers.values()) this.dirty.add(w);
    await this.flush().catch(() => {});
    this.workers.clear();
    // A clean stop: another instance takes the endpoints over at once instead of after the lease.
    await this.opts.store.webhooks.release(this.owner).catch(() => {});
  }
}
