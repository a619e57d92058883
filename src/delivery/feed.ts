/** The feed poller: follows the change feed (commit order) and hands every new article to its reader, in order. */
import { errorText, type Log } from '../domain/log.js';
import type { FeedEntry, FeedPort } from './ports.js';

/** Articles read per feed query; a full page is followed at once by the next one. */
export const FEED_PAGE = 500;
/** Re-reads after a woken read found nothing (ms): a wake can precede the commit's visibility (first WAL write). */
export const WAKE_RETRY_MS: readonly number[] = [1, 3, 8, 20, 50, 100];

export interface FeedPollerOptions {
  articles: FeedPort;
  intervalMs: number;
  /** Called once per batch of new articles, in feed order. */
  deliver: (batch: FeedEntry[]) => void;
  /** When false nobody is listening: the poller only moves its cursor to the end of the feed. */
  hasListeners: () => boolean;
  /** Told when the cursor moved past articles nobody listened to (they were not delivered). */
  onSkip?: () => void;
  log: Log;
  /** Who reads the feed, the first word of its log lines (`stream`, `webhooks`). Default `stream`. */
  label?: string;
}

export class FeedPoller {
  private lastSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private running: Promise<void> | undefined;
  private again = false;
  /** Index into WAKE_RETRY_MS while following up a wake; -1 when not woken. */
  private retry = -1;
  /** A read is already due at once (a wake's zero-delay timer is pending). */
  private due = false;

  constructor(private readonly opts: FeedPollerOptions) {}

  /** The last `seq` handed to `deliver` (or skipped while nobody listened). */
  get cursor(): number {
    return this.lastSeq;
  }

  /** Starts from the end of the feed: a stream carries the articles that arrive from now on. */
  async start(): Promise<void> {
    this.lastSeq = await this.opts.articles.latestSeq();
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Reads now (on a commit, or a bus reconnect); coalesced: a directory watch can fire thousands of times a second. */
  wake(): void {
    if (this.stopped) return;
    this.retry = 0;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.due) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(delayMs: number = this.opts.intervalMs): void {
    if (this.stopped) return;
    this.due = delayMs === 0;
    this.timer = setTimeout(() => {
      this.due = false;
      this.again = false;
      const before = this.lastSeq;
      this.running = this.poll()
        .catch((e: unknown) =>
          this.opts.log.warn({ reader: this.opts.label ?? 'stream', err: errorText(e) }, 'feed poll failed'),
        )
        .finally(() => {
          this.running = undefined;
          this.schedule(this.again ? 0 : this.nextDelay(this.lastSeq !== before));
        });
    }, delayMs);
    this.timer.unref();
  }

  /** After a woken read: found something, or out of retries → the timer; else the next retry. */
  private nextDelay(found: boolean): number {
    if (this.retry < 0 || found || this.retry >= WAKE_RETRY_MS.length) {
      this.retry = -1;
      return this.opts.intervalMs;
    }
    return WAKE_RETRY_MS[this.retry++]!;
  }

  async poll(): Promise<void> {
    if (!this.opts.hasListeners()) {
      const latest = await this.opts.articles.latestSeq();
      // A connection admitted meanwhile keeps the older cursor (it filters by its own start point).
      if (!this.opts.hasListeners() && latest > this.lastSeq) {
        this.lastSeq = latest;
        this.opts.onSkip?.();
      }
      this.retry = -1;
      return;
    }
    for (;;) {
      const page = await this.opts.articles.feedAfter(this.lastSeq, FEED_PAGE);
      if (page.length === 0 || this.stopped) return;
      this.lastSeq = page[page.length - 1]!.seq;
      this.opts.deliver(page);
      if (page.length < FEED_PAGE) return;
      // Let pongs, closes and new connections in between two full pages.
      await new Promise<void>((r) => setImmediate(r));
    }
  }
}
