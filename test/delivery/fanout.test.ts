/**
 * The time-sliced fan-out (src/delivery/fanout.ts), with an injected clock and scheduler: slices end when
 * the clock says so, batches arriving mid-pass keep every connection's order, a refusing connection
 * (closed, slow consumer) gets nothing more, a connection admitted mid-batch gets only its own part.
 */
import { describe, expect, it } from 'vitest';
import { FanOut, type FanOutTarget } from '../../src/delivery/fanout.js';
import type { FeedEntry } from '../../src/store/ports/index.js';

interface Target extends FanOutTarget {
  name: string;
  got: string[];
  refuse?: boolean;
}

const entry = (seq: number): FeedEntry => ({
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
    tickers: [],
  },
});
const batch = (from: number, to: number): FeedEntry[] =>
  Array.from({ length: to - from + 1 }, (_, i) => entry(from + i));

/** A fan-out whose clock advances `msPerRead` on every read, and whose deferred steps run when the test says. */
function harness(targets: Set<Target>, opts: { sliceMs: number; msPerRead: number }) {
  let clock = 0;
  const deferred: (() => void)[] = [];
  const encodes: string[] = [];
  const delivered: number[][] = [];
  const slices: number[] = [];
  const fan = new FanOut<Target>({
    targets,
    encode: (entries, withTickers) => {
      const text = entries.map((e) => `${e.seq}${withTickers ? 't' : ''}`).join(',');
      encodes.push(text);
      return Buffer.from(text);
    },
    send: (t, frames) => {
      if (t.refuse) return false;
      for (const f of frames) t.got.push(...f.toString().split(','));
      return true;
    },
    delivered: (b) => delivered.push(b.map((e) => e.seq)),
    onSlice: (ms) => slices.push(ms),
    sliceMs: opts.sliceMs,
    now: () => (clock += opts.msPerRead),
    defer: (fn) => deferred.push(fn),
  });
  return {
    fan,
    encodes,
    delivered,
    slices,
    deferred,
    /** Runs deferred steps until none is left (at most `max`). */
    drain(max = 10_000) {
      for (let i = 0; i < max && deferred.length > 0; i++) deferred.shift()!();
    },
  };
}

function targets(n: number, sentSeq = 0, withTickers = (i: number) => i % 2 === 0): Set<Target> {
  return new Set(
    Array.from({ length: n }, (_, i) => ({ name: `c${i}`, got: [], sentSeq, withTickers: withTickers(i) })),
  );
}

describe('fan-out slices: the event loop is given back once a slice reaches sliceMs', () => {
  it('serves every connection across several slices, each ended by the clock', () => {
    const set = targets(200);
    // Each clock read advances 1 ms and the clock is read after every connection: a slice of 3 ms serves 3.
    const h = harness(set, { sliceMs: 3, msPerRead: 1 });
    h.fan.push(batch(1, 2));
    expect(h.deferred.length).toBe(1); // not done in one go
    expect([...set].filter((t) => t.got.length > 0).length).toBeLessThan(set.size);
    h.drain();
    for (const t of set) expect(t.got).toEqual(t.withTickers ? ['1t', '2t'] : ['1', '2']);
    expect(h.slices.length).toBeGreaterThan(1);
    expect(h.delivered).toEqual([[1, 2]]);
    expect(h.fan.busy).toBe(false);
  });

  it('frames each batch once per variant, whatever the number of connections', () => {
    const set = targets(100);
    const h = harness(set, { sliceMs: 3, msPerRead: 1 });
    h.fan.push(batch(1, 3));
    h.drain();
    expect(h.encodes.sort()).toEqual(['1,2,3', '1t,2t,3t']);
  });

  it('a small audience is served at once, without waiting for a later tick', () => {
    const set = targets(3);
    const h = harness(set, { sliceMs: 3, msPerRead: 0.5 });
    h.fan.push(batch(1, 1));
    expect(h.deferred).toEqual([]);
    for (const t of set) expect(t.got.length).toBe(1);
    expect(h.delivered).toEqual([[1]]);
  });
});

describe('fan-out order: every connection gets every batch once, in feed order', () => {
  it('keeps order when batches arrive while a pass is still running', () => {
    const set = targets(300);
    const h = harness(set, { sliceMs: 2, msPerRead: 1 });
    h.fan.push(batch(1, 2));
    h.deferred.shift()!(); // a second slice of the first pass
    h.fan.push(batch(3, 3));
    h.fan.push(batch(4, 6));
    h.deferred.shift()!();
    h.fan.push(batch(7, 7));
    h.drain();
    for (const t of set) {
      const seqs = t.got.map((s) => Number.parseInt(s, 10));
      expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    }
    expect(h.delivered).toEqual([[1, 2], [3], [4, 5, 6], [7]]);
    expect(h.fan.busy).toBe(false);
  });

  it('serves a connection added during a pass, from its own admission point', () => {
    const set = targets(100);
    const h = harness(set, { sliceMs: 2, msPerRead: 1 });
    h.fan.push(batch(1, 4));
    const late: Target = { name: 'late', got: [], sentSeq: 2, withTickers: false };
    set.add(late);
    h.drain();
    expect(late.got).toEqual(['3', '4']);
  });

  it('gives a connection admitted after a batch nothing of it', () => {
    const set = targets(2);
    const fresh: Target = { name: 'fresh', got: [], sentSeq: 10, withTickers: true };
    set.add(fresh);
    const h = harness(set, { sliceMs: 3, msPerRead: 1 });
    h.fan.push(batch(5, 10));
    h.fan.push(batch(11, 11));
    h.drain();
    expect(fresh.got).toEqual(['11t']);
  });
});

describe('fan-out and the slow-consumer rule: a connection that refuses gets nothing more', () => {
  it('keeps the refusing connection out and the others whole', () => {
    const set = targets(50);
    const h = harness(set, { sliceMs: 2, msPerRead: 1 });
    h.fan.push(batch(1, 1));
    h.drain();
    const slow = [...set][7]!;
    slow.refuse = true;
    h.fan.push(batch(2, 2));
    h.drain();
    expect(slow.got.map((s) => Number.parseInt(s, 10))).toEqual([1]);
    for (const t of set) if (t !== slow) expect(t.got.map((s) => Number.parseInt(s, 10))).toEqual([1, 2]);
  });

  it('writes nothing after clear() (shutdown), even from a slice already scheduled', () => {
    const set = targets(200);
    const h = harness(set, { sliceMs: 2, msPerRead: 1 });
    h.fan.push(batch(1, 1));
    const served = [...set].filter((t) => t.got.length > 0).length;
    h.fan.clear();
    h.drain();
    expect([...set].filter((t) => t.got.length > 0).length).toBe(served);
    expect(h.fan.busy).toBe(false);
  });
});
