/**
 * The delivery hub, the socket-independent core of the stream: subscribers (a cursor each), filters,
 * variants, replay and the slow-subscriber rule. A replay (`after`) reads the feed itself from
 * max(`after`, lookback start), paced by the backlog, up to the fan-out's settled point, then joins the
 * fan-out there: no gap, no duplicate. A write over `maxBufferedBytes` ends a subscriber, replaying or not.
 */
import { errorText, type Log } from '../domain/log.js';
import type { Tier } from '../contract/index.js';
import { effectiveSince } from '../domain/lookback.js';
import { FanOut } from './fanout.js';
import { FeedPoller } from './feed.js';
import { matchesTickers, type TickerFilter } from './filters.js';
import type { CloseSpec, FeedEntry, FeedPort, Sink } from './ports.js';
import { articleFrames } from './presentation.js';
import { replayLowerBound, replayStartSeq } from './replay.js';

/** Feed entries read per replay page (one page is filtered, framed and written, then the loop yields). */
export const REPLAY_PAGE = 200;
/** Longest run of sink writes before the fan-out yields to the event loop (goal: never blocked > 10 ms). */
export const FAN_OUT_SLICE_MS = 3;
export const DEFAULT_FEED_POLL_MS = 100;

export interface HubOptions {
  feed: FeedPort;
  /** The wall clock (lookback windows of replays). */
  clock: () => number;
  feedPollMs: number;
  feedWake?: (wake: () => void) => () => void;
  maxBufferedBytes: number;
  slowClose: CloseSpec;
  /** The close for a subscriber whose replay failed: `unavailable` or an internal error, by the cause. */
  replayFailedClose: (e: unknown) => CloseSpec;
  sliceMs?: number;
  onSlice?: (ms: number) => void;
  /** Every live subscriber has been handed this batch. */
  delivered?: (batch: readonly FeedEntry[]) => void;
  /** Monotonic milliseconds (performance.now). */
  now: () => number;
  /** Runs `fn` after pending I/O (setImmediate). */
  defer: (fn: () => void) => void;
  log: Log;
}

/** A subscriber as the hub holds it; `sink` is the adapter's (e.g. its connection). */
export interface Subscriber<S extends Sink> {
  readonly sink: S;
  /** The feed `seq` it has been served up to; at first its admission point (only later articles are its own). */
  sentSeq: number;
  /** Its variant: articles with `tickers` or without (may change on a re-check). */
  withTickers: boolean;
  readonly tickers: TickerFilter | undefined;
}

export interface SubscribeSpec {
  /** The feed `seq` at admission: the subscriber gets what enters the feed after it. */
  fromSeq: number;
  withTickers: boolean;
  tickers?: TickerFilter | undefined;
  /** Replay first: every article after this id (within the tier's lookback window), then live. */
  after?: string | undefined;
  tier: Tier;
}

export class DeliveryHub<S extends Sink> {
  /** Open and caught up: the fan-out targets. */
  private readonly live = new Set<Subscriber<S>>();
  /** Open, still reading the older part of the feed itself (`after`); they join `live`. */
  private readonly replaying = new Set<Subscriber<S>>();
  private readonly fanOut: FanOut<Subscriber<S>>;
  private readonly poller: FeedPoller;
  private readonly unsubscribeWake: (() => void) | undefined;
  private stopped = false;
  /** Resolves once the feed cursor is at the end of the feed (retried while the feed cannot be read). */
  readonly ready: Promise<void>;

  constructor(private readonly opts: HubOptions) {
    this.fanOut = new FanOut<Subscriber<S>>({
      targets: this.live,
      encode: articleFrames,
      send: (sub, frames) => this.send(sub, frames),
      ...(opts.delivered ? { delivered: opts.delivered } : {}),
      sliceMs: opts.sliceMs ?? FAN_OUT_SLICE_MS,
      ...(opts.onSlice ? { onSlice: opts.onSlice } : {}),
      now: opts.now,
      defer: opts.defer,
    });
    const poller = new FeedPoller({
      articles: opts.feed,
      intervalMs: opts.feedPollMs,
      deliver: (batch) => {
        this.fanOut.push(batch);
        if (this.replaying.size > 0) this.holdToBound(batch);
      },
      hasListeners: () => this.live.size + this.replaying.size > 0,
      log: opts.log,
    });
    this.poller = poller;
    this.unsubscribeWake = opts.feedWake?.(() => poller.wake());
    this.ready = (async () => {
      for (;;) {
        if (this.stopped) return;
        try {
          await poller.start();
          return;
        } catch (e) {
          opts.log.warn({ err: errorText(e) }, 'cannot read the article feed; retrying');
          await new Promise((r) => setTimeout(r, opts.feedPollMs));
        }
      }
    })();
  }

  get size(): number {
    return this.live.size + this.replaying.size;
  }

  /** The feed `seq` up to which every article has been handed to the subscribers (or skipped: nobody listening). */
  get cursor(): number {
    return this.poller.cursor;
  }

  /** Reads the feed now instead of at the next tick (coalesced). */
  wake(): void {
    this.poller.wake();
  }

  /** Every subscriber being served (a copy: the caller may end some). */
  subscribers(): Subscriber<S>[] {
    return [...this.live, ...this.replaying];
  }

  has(sub: Subscriber<S>): boolean {
    return this.live.has(sub) || this.replaying.has(sub);
  }

  subscribe(sink: S, spec: SubscribeSpec): Subscriber<S> {
    const sub: Subscriber<S> = { sink, sentSeq: spec.fromSeq, withTickers: spec.withTickers, tickers: spec.tickers };
    if (spec.after === undefined) this.live.add(sub);
    else {
      this.replaying.add(sub);
      void this.replay(sub, spec.after, spec.tier, spec.fromSeq);
    }
    return sub;
  }

  /** Stops serving it (its sink went); true when it was being served. */
  remove(sub: Subscriber<S>): boolean {
    const live = this.live.delete(sub);
    return this.replaying.delete(sub) || live;
  }

  /** Stops serving it and has its sink end with `spec` (a re-check, a lost slot). No-op when no longer served. */
  end(sub: Subscriber<S>, spec: CloseSpec, why: string): void {
    if (!this.remove(sub)) return;
    sub.sink.end(spec, why);
  }

  /** Stops reading the feed and drops pending work; the sinks are the adapter's to close. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.ready;
    this.unsubscribeWake?.();
    await this.poller.stop();
    this.fanOut.clear();
    this.live.clear();
    this.replaying.clear();
  }

  /** Writes frames to a subscriber (live or replaying) unless it is gone or over the slow-subscriber bound. */
  private send(sub: Subscriber<S>, frames: Buffer[]): boolean {
    const sink = sub.sink;
    if (!sink.open()) {
      this.remove(sub);
      return false;
    }
    const buffered = sink.buffered();
    if (buffered > this.opts.maxBufferedBytes) {
      this.end(sub, this.opts.slowClose, `send buffer ${buffered} bytes`);
      return false;
    }
    sink.write(frames);
    return true;
  }

  /** A replaying subscriber is owed every live batch too: one that concerns it applies the slow-subscriber rule. */
  private holdToBound(batch: readonly FeedEntry[]): void {
    for (const sub of this.replaying) {
      const buffered = sub.sink.buffered();
      if (buffered <= this.opts.maxBufferedBytes) continue;
      if (sub.tickers && !batch.some((e) => matchesTickers(e.article, sub.tickers))) continue;
      this.end(sub, this.opts.slowClose, `send buffer ${buffered} bytes during replay`);
    }
  }

  /** Waits for the backlog to fall to half the bound, so a replay never pushes its reader over it; false if it went. */
  private async roomFor(sub: Subscriber<S>): Promise<boolean> {
    while (this.replaying.has(sub) && sub.sink.buffered() > this.opts.maxBufferedBytes / 2) await sub.sink.drained();
    return this.replaying.has(sub);
  }

  private async replay(sub: Subscriber<S>, after: string, tier: Tier, admittedSeq: number): Promise<void> {
    const feed = this.opts.feed;
    try {
      const bound = replayLowerBound(after, effectiveSince(tier, this.opts.clock(), undefined));
      let pos = await replayStartSeq(feed, bound, admittedSeq);
      for (;;) {
        if (!this.replaying.has(sub)) return;
        if (pos >= admittedSeq && pos >= this.fanOut.settledSeq(this.poller.cursor)) {
          // All up to `pos` is written, the rest is pending in the fan-out or unread: synchronous hand-over.
          this.replaying.delete(sub);
          sub.sentSeq = pos;
          this.live.add(sub);
          return;
        }
        const page = await feed.feedAfter(pos, REPLAY_PAGE);
        if (!this.replaying.has(sub)) return;
        if (page.length === 0) {
          // The feed reader is ahead of what this read saw (another connection's view): look again shortly.
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        pos = page[page.length - 1]!.seq;
        const entries = page.filter((e) => matchesTickers(e.article, sub.tickers));
        // Page by page, never the whole replay in memory, through the live path's slow-subscriber check.
        if (entries.length > 0 && !this.send(sub, [articleFrames(entries, sub.withTickers)])) return;
        await new Promise<void>((r) => setImmediate(r));
        if (!(await this.roomFor(sub))) return;
      }
    } catch (e) {
      this.opts.log.warn({ err: errorText(e) }, 'replay failed');
      this.end(sub, this.opts.replayFailedClose(e), 'replay failed');
    }
  }
}
