/**
 * The pure parts of resume and filter in the delivery core: where a replay starts in the feed
 * (src/delivery/replay.ts), the replay's lower bound (after vs lookback window), and the fan-out's
 * ticker filter and join point (src/delivery/fanout.ts), with an in-memory feed and an injected clock
 * and scheduler. The stream's parameters are in test/stream/params.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { monotonicFactory } from 'ulid';
import { FanOut, type FanOutTarget } from '../../src/delivery/fanout.js';
import type { TickerFilter } from '../../src/delivery/filters.js';
import { replayLowerBound, replayStartSeq } from '../../src/delivery/replay.js';
import { ulidTimePrefix } from '../../src/store/ports/ids.js';
import type { FeedEntry } from '../../src/store/ports/index.js';

const T0 = Date.parse('2026-11-21T12:00:00Z');

/** A feed of `n` entries with seqs `seqOf(i)` (gaps allowed) and increasing ids; counts the reads. */
function feed(n: number, seqOf = (i: number) => i + 1) {
  const ulid = monotonicFactory();
  const entries: FeedEntry[] = Array.from({ length: n }, (_, i) => ({
    seq: seqOf(i),
    article: {
      id: ulid(T0 + i * 10),
      content: `a${i}`,
      urgency: 'regular',
      sentiment: null,
      published_at: null,
      received_at: new Date(T0 + i * 10).toISOString(),
      source: null,
      url: null,
      tickers: [],
    },
  }));
  let reads = 0;
  return {
    entries,
    get reads() {
      return reads;
    },
    async feedAfter(seq: number, limit: number) {
      reads++;
      return entries.filter((e) => e.seq > seq).slice(0, limit);
    },
  };
}

describe('replay start: the feed position right before the first article above the bound', () => {
  it('finds, for every bound, the position from which the feed yields exactly the later articles', async () => {
    for (const seqOf of [(i: number) => i + 1, (i: number) => 3 * i + 2]) {
      const f = feed(50, seqOf);
      const upTo = f.entries.at(-1)!.seq;
      for (let k = 0; k < 50; k++) {
        const bound = f.entries[k]!.article.id;
        const start = await replayStartSeq(f, bound, upTo);
        expect(f.entries.filter((e) => e.seq > start).map((e) => e.article.id)).toEqual(
          f.entries.slice(k + 1).map((e) => e.article.id),
        );
      }
      // Below every id: from the start; above every id: nothing.
      expect(await replayStartSeq(f, '0'.repeat(26), upTo)).toBe(0);
      expect(await replayStartSeq(f, '7'.repeat(26), upTo)).toBe(upTo);
    }
  });

  it('never goes past the admission point, whatever entries were added after it', async () => {
    const f = feed(20);
    expect(await replayStartSeq(f, '7'.repeat(26), 10)).toBe(10);
  });

  it('reads a logarithmic number of single entries', async () => {
    const f = feed(4096);
    await replayStartSeq(f, f.entries[1234]!.article.id, 4096);
    expect(f.reads).toBeLessThanOrEqual(Math.ceil(Math.log2(4096)) + 1);
  });
});

describe('replay bound: the later of after and the start of the lookback window', () => {
  it('keeps an after inside the window', () => {
    const after = ulidTimePrefix(T0) + 'A'.repeat(16);
    expect(replayLowerBound(after, T0 - 1000)).toBe(after);
  });
  it('clamps an after older than the window to the window start: nothing received at or before it', () => {
    const bound = replayLowerBound('0'.repeat(26), T0);
    expect(bound > ulidTimePrefix(T0) + 'Z'.repeat(15) + 'Y').toBe(true);
    expect(bound < ulidTimePrefix(T0 + 1) + '0'.repeat(16)).toBe(true);
  });
});

interface Target extends FanOutTarget {
  got: number[];
}

const about = (seq: number, ...tickers: string[]): FeedEntry => ({
  seq,
  article: {
    id: String(seq),
    content: `a${seq}`,
    urgency: 'regular',
    sentiment: null,
    published_at: null,
    received_at: '2026-11-21T12:00:00Z',
    source: null,
    url: null,
    tickers: tickers.map((ticker) => ({ ticker, sentiment: 'neutral', relevance: 1 })),
  },
});
const filter = (...symbols: string[]): TickerFilter => ({
  key: [...symbols].sort().join(','),
  symbols: new Set(symbols),
  minRelevance: 0.5,
});

function fanOut(targets: Set<Target>, sliceMs = 1000) {
  const encodes: string[] = [];
  const deferred: (() => void)[] = [];
  let clock = 0;
  const fan = new FanOut<Target>({
    targets,
    encode: (entries) => {
      const text = entries.map((e) => e.seq).join(',');
      encodes.push(text);
      return Buffer.from(text);
    },
    send: (t, frames) => {
      for (const f of frames) t.got.push(...f.toString().split(',').map(Number));
      return true;
    },
    sliceMs,
    now: () => (clock += 1),
    defer: (fn) => deferred.push(fn),
  });
  return { fan, encodes, deferred };
}

describe('fan-out ticker filter: each connection gets its matching entries, framed once per filter', () => {
  it('serves filtered and unfiltered connections from one batch, sharing the framing of equal filters', () => {
    const a1: Target = { sentSeq: 0, withTickers: true, tickers: filter('AAPL'), got: [] };
    const a2: Target = { sentSeq: 0, withTickers: true, tickers: filter('AAPL'), got: [] };
    const m: Target = { sentSeq: 0, withTickers: true, tickers: filter('MSFT', 'NVDA'), got: [] };
    const all: Target = { sentSeq: 0, withTickers: true, got: [] };
    const { fan, encodes } = fanOut(new Set([a1, a2, m, all]));
    fan.push([about(1, 'AAPL'), about(2), about(3, 'NVDA'), about(4, 'MSFT', 'AAPL')]);
    expect(a1.got).toEqual([1, 4]);
    expect(a2.got).toEqual([1, 4]);
    expect(m.got).toEqual([3, 4]);
    expect(all.got).toEqual([1, 2, 3, 4]);
    expect(encodes.sort()).toEqual(['1,2,3,4', '1,4', '3,4']);
  });

  it('moves a connection past a batch with nothing for it, so a later batch is not sent twice', () => {
    const t: Target = { sentSeq: 0, withTickers: true, tickers: filter('TSLA'), got: [] };
    const { fan } = fanOut(new Set([t]));
    fan.push([about(1), about(2)]);
    expect(t.sentSeq).toBe(2);
    fan.push([about(3, 'TSLA')]);
    expect(t.got).toEqual([3]);
  });

  it('still ends slices on the clock with filtered connections', () => {
    const targets = new Set<Target>(
      Array.from({ length: 10 }, () => ({ sentSeq: 0, withTickers: true, tickers: filter('AAPL'), got: [] })),
    );
    const { fan, deferred } = fanOut(targets, 3);
    fan.push([about(1, 'AAPL')]);
    expect(deferred.length).toBe(1); // yielded before serving all ten
    while (deferred.length > 0) deferred.shift()!();
    for (const t of targets) expect(t.got).toEqual([1]);
  });
});

describe('fan-out join point: a connection that has the feed up to settledSeq() joins without a gap', () => {
  it('is the reader cursor when idle, and just before the oldest batch still being written', () => {
    const slow: Target = { sentSeq: 0, withTickers: false, got: [] };
    const others = Array.from({ length: 5 }, (): Target => ({ sentSeq: 0, withTickers: false, got: [] }));
    const targets = new Set<Target>([slow, ...others]);
    const { fan, deferred } = fanOut(targets, 2);
    expect(fan.settledSeq(7)).toBe(7);
    fan.push([about(8), about(9)]);
    expect(fan.settledSeq(9)).toBe(7); // batch 8-9 is not with everyone yet
    // A resumed connection that read up to 7 itself joins now, in the middle of the pass.
    const joined: Target = { sentSeq: 7, withTickers: false, got: [] };
    targets.add(joined);
    fan.push([about(10)]);
    while (deferred.length > 0) deferred.shift()!();
    expect(joined.got).toEqual([8, 9, 10]);
    expect(fan.settledSeq(10)).toBe(10);
  });
});
