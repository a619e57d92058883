/**
 * The poller's scheduling: claims due sources by lease (one instance polls a source at a time), polls
 * (./poll.ts) and records (./poll-record.ts). Up to `concurrency` polls at once, each bounded by POLL_HTTP's
 * timeouts, so a slow source never delays the others. A paused or removed source's poll is abandoned.
 */
import { silentLog, type Log } from '../domain/log.js';
import { fetchFeed, type FetchOptions } from './feed/index.js';
import { pollOnce, type FetchFn, type PollSteps } from './poll.js';
import { PollRecorder, type PollerMetrics, type PollReport } from './poll-record.js';
import { POLL_DEFAULTS, POLL_HTTP, pollerOwnerId, pollerUserAgent } from './poll-rules.js';
import type { SourceRecord, SourceStore } from '../store/ports/index.js';

// The service and the command line import the User-Agent from here.
export { pollerUserAgent } from './poll-rules.js';

export interface PollerOptions {
  store: SourceStore;
  /** Default pollerUserAgent('fns'). */
  userAgent?: string;
  owner?: string;
  clock?: () => number;
  fetch?: FetchFn;
  random?: () => number;
  concurrency?: number;
  leaseMs?: number;
  tickMs?: number;
  registryCheckMs?: number;
  http?: Partial<Pick<FetchOptions, 'connectTimeoutMs' | 'timeoutMs' | 'maxBytes' | 'maxRedirects'>>;
  /** FEED_ALLOW_PRIVATE: feeds and redirects to private, loopback or link-local addresses; refused by default. */
  allowPrivate?: boolean;
  /** Called after a poll stored articles (the service wakes its stream). */
  onStored?: (ids: string[]) => void;
  onPoll?: (report: PollReport) => void;
  /** One line per change of a source's state, not per poll. */
  log?: Log;
  metrics?: PollerMetrics;
}

interface InFlight {
  abort: AbortController;
  done: Promise<void>;
}

export class SourcePoller {
  readonly owner: string;
  private readonly store: SourceStore;
  private readonly clock: () => number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly registryCheckMs: number;
  private readonly steps: PollSteps;
  private readonly recorder: PollRecorder;
  private readonly log: Log;

  private running = false;
  /** Which start() this is: a registry watch of an earlier run, still awaiting the store, ends there. */
  private run = 0;
  private readonly inFlight = new Map<string, InFlight>();
  /** Next poll time of the sources this process polled (its timer fires for the earliest). */
  private readonly known = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private registryTimer: NodeJS.Timeout | undefined;
  private cycling: Promise<void> | undefined;
  private again = false;
  private version: number | undefined;
  private lastPrune = 0;

  constructor(opts: PollerOptions) {
    this.store = opts.store;
    this.owner = opts.owner ?? pollerOwnerId();
    this.clock = opts.clock ?? Date.now;
    this.concurrency = Math.max(1, opts.concurrency ?? POLL_DEFAULTS.concurrency);
    this.leaseMs = opts.leaseMs ?? POLL_DEFAULTS.leaseMs;
    this.tickMs = opts.tickMs ?? POLL_DEFAULTS.tickMs;
    this.registryCheckMs = Math.min(opts.registryCheckMs ?? POLL_DEFAULTS.registryCheckMs, 1000);
    this.log = opts.log ?? silentLog;
    this.steps = {
      store: this.store,
      fetch: opts.fetch ?? fetchFeed,
      fetchOptions: {
        userAgent: opts.userAgent ?? pollerUserAgent('fns'),
        ...POLL_HTTP,
        ...opts.http,
        allowPrivate: opts.allowPrivate === true,
      },
      clock: this.clock,
    };
    this.recorder = new PollRecorder({
      store: this.store,
      owner: this.owner,
      clock: this.clock,
      random: opts.random ?? Math.random,
      log: this.log,
      metrics: opts.metrics,
      onStored: opts.onStored,
      onPoll: opts.onPoll,
      onScheduled: (name, nextPollAt) => this.known.set(name, nextPollAt),
    });
  }

  /** Starts polling: claims what is due at once, then keeps to the schedule until stop(). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const run = ++this.run;
    const version = await this.store.registryVersion().catch(() => undefined);
    if (run !== this.run) return;
    this.version = version;
    this.watchRegistry(run);
    this.wake();
    await this.cycling;
  }

  /** Stops claiming, abandons the polls in flight (their leases are released) and waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    clearTimeout(this.registryTimer);
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
    clearTimeout(this.timer);
    this.cycling = this.cycle()
      .catch((e: unknown) => this.recorder.storeTrouble(e))
      .finally(() => {
        this.cycling = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.schedule();
      });
  }

  /** The timer (none is pending after a cycle): the earliest next poll this process knows of, at most `tickMs` away. */
  private schedule(): void {
    if (!this.running) return;
    const now = this.clock();
    let delay = this.tickMs;
    for (const [name, at] of this.known) if (!this.inFlight.has(name)) delay = Math.min(delay, at - now);
    this.timer = setTimeout(() => this.wake(), Math.max(0, delay));
    this.timer.unref?.();
  }

  private watchRegistry(run: number): void {
    if (!this.running || run !== this.run) return;
    this.registryTimer = setTimeout(async () => {
      try {
        const v = await this.store.registryVersion();
        if (v !== this.version) {
          this.version = v;
          await this.abandonUnwanted();
          this.wake();
        }
      } catch (e) {
        this.recorder.storeTrouble(e);
      }
      this.watchRegistry(run);
    }, this.registryCheckMs);
    this.registryTimer.unref?.();
  }

  private async abandonUnwanted(): Promise<void> {
    for (const [name, f] of this.inFlight) {
      const rec = await this.store.get(name);
      if (!rec || rec.paused) {
        f.abort.abort();
        this.known.delete(name);
      }
    }
  }

  private async cycle(): Promise<void> {
    const now = this.clock();
    const free = this.concurrency - this.inFlight.size;
    if (free > 0) {
      const claimed = await this.store.claimDue(this.owner, now, this.leaseMs, free);
      this.recorder.storeAnswers();
      for (const rec of claimed) this.launch(rec);
      // What was due is claimed (here or elsewhere) or paused: forget it.
      for (const [name, at] of this.known) if (at <= now && !this.inFlight.has(name)) this.known.delete(name);
    }
    if (now - this.lastPrune >= POLL_DEFAULTS.pruneEveryMs) {
      this.lastPrune = now;
      await this.store
        .pruneSeen(POLL_DEFAULTS.seenRetentionMs, now)
        .catch((e: unknown) => this.recorder.storeTrouble(e));
    }
  }

  private launch(rec: SourceRecord): void {
    if (this.inFlight.has(rec.name)) return;
    this.recorder.begin(rec);
    const abort = new AbortController();
    // A poll that throws is recorded as failed, so it is retried on schedule, not at lease expiry. Neither step throws.
    const done = pollOnce(rec, abort.signal, this.steps)
      .then(
        (result) => this.recorder.record(rec, result),
        (e: unknown) =>
          abort.signal.aborted ? this.recorder.record(rec, { kind: 'aborted' }) : this.recorder.unexpected(rec, e),
      )
      .finally(() => {
        this.inFlight.delete(rec.name);
        this.wake();
      });
    this.inFlight.set(rec.name, { abort, done });
  }
}
