/**
 * Fan-out of feed batches to every open connection in slices of about `sliceMs`: each connection gets every
 * batch once, whole and in feed order; bytes are framed once per variant and filter. A connection may join
 * at or after `settledSeq()` without a gap.
 *
 * Order per connection holds because a pass walks the live `Set` (connections added during it are visited,
 * removed ones skipped) and hands each connection every pending batch past its own cursor in one call; a
 * later pass brings the connections already visited up to date.
 */
import type { FeedEntry } from './ports.js';
import { matchesTickers, type TickerFilter } from './filters.js';

export interface FanOutTarget {
  /** The feed `seq` up to which this connection has been served (its admission point at first). */
  sentSeq: number;
  withTickers: boolean;
  /** Only the entries about one of these tickers (the connection's `tickers` parameter). */
  tickers?: TickerFilter | undefined;
}

export interface FanOutOptions<C extends FanOutTarget> {
  /** The connections to serve, walked live (a `Set`: additions during a pass are visited). */
  targets: Iterable<C>;
  /** Serialises and frames entries for one variant (once per batch and variant, or for one connection's tail). */
  encode: (entries: readonly FeedEntry[], withTickers: boolean) => Buffer;
  /** Writes the frames in order; false when refused (closed, or ended as slow), and the cursor stays. */
  send: (target: C, frames: Buffer[]) => boolean;
  /** Told the length (ms) of every slice. */
  onSlice?: (ms: number) => void;
  /** Every connection has been handed this batch (or has gone). */
  delivered?: (batch: readonly FeedEntry[]) => void;
  sliceMs: number;
  /** Monotonic milliseconds (performance.now); injected for tests. */
  now: () => number;
  /** Runs `fn` after pending I/O (setImmediate); injected for tests. */
  defer: (fn: () => void) => void;
}

interface Pending {
  entries: readonly FeedEntry[];
  firstSeq: number;
  lastSeq: number;
  plain?: Buffer;
  full?: Buffer;
  /** Per filter key and variant: the matching entries framed, or null when none match. */
  filtered?: Map<string, Buffer | null>;
}

export class FanOut<C extends FanOutTarget> {
  private pending: Pending[] = [];
  private latest = 0;
  private running = false;
  /** Bumped by `clear`: a slice scheduled before it does nothing. */
  private generation = 0;
  /** A batch arrived while a pass was running: the connections visited before it need one more pass. */
  private pushedDuringPass = false;

  constructor(private readonly opts: FanOutOptions<C>) {}

  /** True while a pass is writing (a batch is not yet with every connection). */
  get busy(): boolean {
    return this.running;
  }

  /** The seq every connection has been served up to: a connection with everything up to it joins without a gap. */
  settledSeq(readerCursor: number): number {
    return this.pending.length > 0 ? this.pending[0]!.firstSeq - 1 : readerCursor;
  }

  /** Hands a batch (in feed order, after every earlier one) to every connection. */
  push(batch: readonly FeedEntry[]): void {
    if (batch.length === 0) return;
    this.pending.push({ entries: batch, firstSeq: batch[0]!.seq, lastSeq: batch[batch.length - 1]!.seq });
    this.latest = batch[batch.length - 1]!.seq;
    if (this.running) {
      this.pushedDuringPass = true;
      return;
    }
    this.running = true;
    this.pass();
  }

  /** Drops pending work (shutdown): nothing more is written. */
  clear(): void {
    this.pending = [];
    this.running = false;
    this.generation++;
  }

  private pass(): void {
    this.pushedDuringPass = false;
    const covered = this.pending.length;
    const it = this.opts.targets[Symbol.iterator]();
    const generation = this.generation;
    const step = (): void => {
      if (generation !== this.generation) return; // cleared meanwhile
      const start = this.opts.now();
      for (let r = it.next(); !r.done; r = it.next()) {
        // The clock after every connection (far cheaper than a write): a burst of large frames ends its slice on time.
        this.serve(r.value);
        if (this.opts.now() - start >= this.opts.sliceMs) {
          this.sliceDone(start);
          this.opts.defer(step);
          return;
        }
      }
      this.sliceDone(start);
      this.passDone(covered);
    };
    step();
  }

  private sliceDone(start: number): void {
    this.opts.onSlice?.(this.opts.now() - start);
  }

  private passDone(covered: number): void {
    // Every connection has the batches that were pending when the pass began.
    const done = this.pending.splice(0, covered);
    for (const b of done) this.opts.delivered?.(b.entries);
    if (this.pending.length > 0 && this.pushedDuringPass) {
      const generation = this.generation;
      this.opts.defer(() => {
        if (generation === this.generation) this.pass();
      });
      return;
    }
    this.pending = [];
    this.running = false;
  }

  private serve(c: C): void {
    const from = c.sentSeq;
    if (from >= this.latest) return;
    const frames: Buffer[] = [];
    for (const b of this.pending) {
      if (b.lastSeq <= from) continue;
      if (b.firstSeq > from) {
        if (c.tickers) {
          const f = this.filtered(b, c.tickers, c.withTickers);
          if (f) frames.push(f);
        } else {
          frames.push(
            c.withTickers
              ? (b.full ??= this.opts.encode(b.entries, true))
              : (b.plain ??= this.opts.encode(b.entries, false)),
          );
        }
      } else {
        // Admitted in the middle of this batch (rare): only what entered the store after it, framed for it alone.
        const tail = b.entries.filter((e) => e.seq > from && matchesTickers(e.article, c.tickers));
        if (tail.length > 0) frames.push(this.opts.encode(tail, c.withTickers));
      }
    }
    if (frames.length === 0) {
      // Nothing in these batches for its filter: it is served up to here all the same.
      c.sentSeq = this.latest;
      return;
    }
    if (this.opts.send(c, frames)) c.sentSeq = this.latest;
  }

  private filtered(b: Pending, filter: TickerFilter, withTickers: boolean): Buffer | null {
    b.filtered ??= new Map();
    const key = withTickers ? `+${filter.key}` : `-${filter.key}`;
    let f = b.filtered.get(key);
    if (f === undefined) {
      const entries = b.entries.filter((e) => matchesTickers(e.article, filter));
      f = entries.length > 0 ? this.opts.encode(entries, withTickers) : null;
      b.filtered.set(key, f);
    }
    return f;
  }
}
