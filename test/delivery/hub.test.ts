/**
 * The delivery core (src/delivery/hub.ts) without a socket: a MemoryFeed, sinks that record the frames
 * they are given and report a backlog the test sets. A cursor per subscriber, replay from an id then
 * live without a gap or a duplicate at the seam, the ticker filter (replayed and live), one frame per
 * variant shared by every subscriber of it, pacing by the backlog, and the slow-subscriber rule with
 * the contract's close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { monotonicFactory } from 'ulid';
import { stream } from '../../src/contract/index.js';
import {
  DeliveryHub,
  MemoryFeed,
  REPLAY_PAGE,
  tickerFilter,
  type CloseSpec,
  type Sink,
  type SubscribeSpec,
} from '../../src/delivery/index.js';
import type { StoredArticle } from '../../src/domain/articles.js';
import { until } from '../support/wait.js';
import { silentLog } from '../../src/domain/log.js';

const MAX_BUFFERED = 64 * 1024;
const INTERNAL: CloseSpec = { code: 1011, reason: '' };

/** The text messages of concatenated unmasked WebSocket text frames (RFC 6455 §5.2). */
function decodeFrames(buf: Buffer): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < buf.length) {
    expect(buf[at]).toBe(0x81);
    let len = buf[at + 1]!;
    at += 2;
    if (len === 126) {
      len = buf.readUInt16BE(at);
      at += 2;
    } else if (len === 127) {
      len = Number(buf.readBigUInt64BE(at));
      at += 8;
    }
    out.push(buf.toString('utf8', at, at + len));
    at += len;
  }
  return out;
}

/** A sink that records what it is given; its backlog is what the test says. */
class RecordingSink implements Sink {
  readonly frames: Buffer[] = [];
  readonly messages: { id: string; tickers?: unknown }[] = [];
  backlog = 0;
  closed = false;
  ended: { spec: CloseSpec; why: string } | undefined;
  private waiting: (() => void)[] = [];
  open() {
    return !this.closed && !this.ended;
  }
  buffered() {
    return this.backlog;
  }
  write(frames: Buffer[]) {
    for (const f of frames) {
      this.frames.push(f);
      for (const m of decodeFrames(f)) this.messages.push(JSON.parse(m));
    }
  }
  drained() {
    return new Promise<void>((r) => this.waiting.push(r));
  }
  /** The subscriber read everything: the backlog is empty. */
  drain() {
    this.backlog = 0;
    for (const w of this.waiting.splice(0)) w();
  }
  end(spec: CloseSpec, why: string) {
    this.ended = { spec, why };
    for (const w of this.waiting.splice(0)) w();
  }
  get ids() {
    return this.messages.map((m) => m.id);
  }
}

const ulid = monotonicFactory();
let n = 0;
function article(tickers: string[] = []): StoredArticle {
  const now = Date.now();
  return {
    id: ulid(now),
    content: `article ${n++}`,
    urgency: 'regular',
    sentiment: null,
    published_at: null,
    received_at: new Date(now).toISOString(),
    source: null,
    url: null,
    tickers: tickers.map((ticker) => ({ ticker, sentiment: 'neutral' as const, relevance: 1 })),
  };
}

const hubs: DeliveryHub<RecordingSink>[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.stop()));
});

async function start(feed = new MemoryFeed(100_000)) {
  const hub = new DeliveryHub<RecordingSink>({
    feed,
    clock: Date.now,
    feedPollMs: 1000,
    feedWake: (wake) => feed.subscribe(wake),
    maxBufferedBytes: MAX_BUFFERED,
    slowClose: stream.closeCodes.slowConsumer,
    replayFailedClose: () => INTERNAL,
    now: () => performance.now(),
    defer: (fn) => setImmediate(fn),
    log: silentLog,
  });
  hubs.push(hub);
  await hub.ready;
  return {
    hub,
    feed,
    append: (k: number, tickers?: (i: number) => string[]) =>
      Array.from({ length: k }, (_, i) => feed.append(article(tickers?.(i))).article.id),
  };
}

const subscribe = async (hub: DeliveryHub<RecordingSink>, feed: MemoryFeed, spec: Partial<SubscribeSpec> = {}) => {
  const sink = new RecordingSink();
  const sub = hub.subscribe(sink, { fromSeq: await feed.latestSeq(), withTickers: true, tier: 'max', ...spec });
  return { sink, sub };
};

describe('a cursor per subscriber', () => {
  it('each subscriber gets exactly what entered the feed after its own admission point, in order', async () => {
    const { hub, feed, append } = await start();
    const a = await subscribe(hub, feed);
    const first = append(3);
    const b = await subscribe(hub, feed);
    const second = append(4);
    await until(() => a.sink.messages.length === 7 && b.sink.messages.length === 4, 'both subscribers served');
    expect(a.sink.ids).toEqual([...first, ...second]);
    expect(b.sink.ids).toEqual(second);
    expect(hub.cursor).toBe(7);
    expect(a.sub.sentSeq).toBe(7);
  });

  it('a removed subscriber gets nothing more; the others go on', async () => {
    const { hub, feed, append } = await start();
    const a = await subscribe(hub, feed);
    const b = await subscribe(hub, feed);
    append(1);
    await until(() => a.sink.messages.length === 1 && b.sink.messages.length === 1, 'the first article');
    expect(hub.remove(a.sub)).toBe(true);
    expect(hub.remove(a.sub)).toBe(false);
    append(2);
    await until(() => b.sink.messages.length === 3, 'the later articles');
    expect(a.sink.messages).toHaveLength(1);
    expect(hub.size).toBe(1);
  });
});

describe('replay from an id, then live', () => {
  it('replays what followed the id and joins the live feed with no gap and no duplicate, while articles keep arriving', async () => {
    const { hub, feed, append } = await start();
    const before = append(3 * REPLAY_PAGE + 17);
    const anchor = 41;
    const { sink } = await subscribe(hub, feed, { after: before[anchor] });
    // Articles keep arriving while the replay runs (a chunk per turn of the event loop).
    const during: string[] = [];
    for (let i = 0; i < 20; i++) {
      during.push(...append(7));
      await new Promise((r) => setImmediate(r));
    }
    const after = append(5);
    const expected = [...before.slice(anchor + 1), ...during, ...after];
    await until(() => sink.messages.length >= expected.length, 'the replay and the live articles');
    await new Promise((r) => setTimeout(r, 20)); // anything more (a duplicate) would show below
    expect(sink.ids).toEqual(expected);
  });

  it('an id older than everything the feed keeps replays all it keeps (a MemoryFeed forgets)', async () => {
    const { hub, feed, append } = await start(new MemoryFeed(10));
    const ids = append(25);
    const { sink } = await subscribe(hub, feed, { after: '0'.repeat(26) });
    await until(() => sink.messages.length >= 10, 'the kept articles');
    expect(sink.ids).toEqual(ids.slice(-10));
  });

  it('never replays beyond the lookback window of the tier: an id from long ago starts at the window', async () => {
    const { hub, feed } = await start();
    // An article received 30 days ago (older than any window), then a recent one.
    const longAgo = Date.now() - 30 * 24 * 3600_000;
    feed.append({ ...article(), id: monotonicFactory()(longAgo), received_at: new Date(longAgo).toISOString() });
    const recent = feed.append(article()).article.id;
    const { sink } = await subscribe(hub, feed, { after: '0'.repeat(26), tier: 'pro' });
    await until(() => sink.messages.length >= 1, 'the recent article');
    await new Promise((r) => setTimeout(r, 20));
    expect(sink.ids).toEqual([recent]);
  });
});

describe('the ticker filter', () => {
  it('a filtered subscriber gets only the articles about its symbols, replayed and live; an unfiltered one gets all', async () => {
    const { hub, feed, append } = await start();
    const about = (i: number) => (i % 3 === 0 ? ['NVDA'] : i % 3 === 1 ? ['AAPL', 'MSFT'] : []);
    const [anchor, ...before] = append(30, about);
    const filtered = await subscribe(hub, feed, { after: anchor, tickers: tickerFilter(['NVDA', 'MSFT']) });
    const all = await subscribe(hub, feed);
    const live = append(30, about);
    const matching = (ids: string[]) => ids.filter((_, i) => about(i).some((t) => t === 'NVDA' || t === 'MSFT'));
    const expected = [...matching([anchor!, ...before]).filter((id) => id !== anchor), ...matching(live)];
    await until(
      () => filtered.sink.messages.length >= expected.length && all.sink.messages.length >= live.length,
      'the filtered articles',
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(filtered.sink.ids).toEqual(expected);
    expect(all.sink.ids).toEqual(live);
  });
});

describe('presentation per variant', () => {
  it('a batch is framed once per variant: every subscriber of a variant is given the same bytes, tickers only in the full one', async () => {
    const { hub, feed, append } = await start();
    const full = await Promise.all([1, 2, 3].map(() => subscribe(hub, feed, { withTickers: true })));
    const plain = await Promise.all([1, 2, 3].map(() => subscribe(hub, feed, { withTickers: false })));
    append(4, () => ['SPY']);
    await until(() => [...full, ...plain].every((s) => s.sink.messages.length === 4), 'every subscriber served');
    for (const group of [full, plain]) {
      const [first, ...rest] = group;
      for (const s of rest) {
        expect(s.sink.frames.length).toBe(first!.sink.frames.length);
        s.sink.frames.forEach((f, i) => expect(f).toBe(first!.sink.frames[i])); // the same Buffer, not a copy
      }
    }
    expect(full[0]!.sink.frames[0]).not.toBe(plain[0]!.sink.frames[0]);
    expect(full[0]!.sink.messages.every((m) => Array.isArray(m.tickers))).toBe(true);
    expect(plain[0]!.sink.messages.every((m) => !('tickers' in m))).toBe(true);
  });

  it('a variant switched on a subscriber (a re-check) applies from the next batch', async () => {
    const { hub, feed, append } = await start();
    const s = await subscribe(hub, feed, { withTickers: true });
    append(1);
    await until(() => s.sink.messages.length === 1, 'the first article');
    s.sub.withTickers = false;
    append(1);
    await until(() => s.sink.messages.length === 2, 'the second article');
    expect(s.sink.messages.map((m) => 'tickers' in m)).toEqual([true, false]);
  });
});

describe('pacing and the slow-subscriber rule', () => {
  it('a replay writes the next page only once the backlog is at most half the bound', async () => {
    const { hub, feed, append } = await start();
    const ids = append(3 * REPLAY_PAGE);
    const { sink } = await subscribe(hub, feed, { after: '0'.repeat(26) });
    sink.backlog = MAX_BUFFERED / 2 + 1; // the subscriber has not read yet
    await until(() => sink.messages.length === REPLAY_PAGE, 'the first page');
    // The hub waits on the sink; a poke without room does not let the next page through.
    await new Promise((r) => setTimeout(r, 20));
    expect(sink.messages).toHaveLength(REPLAY_PAGE);
    sink.backlog = MAX_BUFFERED / 2;
    sink.drain();
    await until(() => sink.messages.length === 3 * REPLAY_PAGE, 'the rest of the replay');
    expect(sink.ids).toEqual(ids);
    expect(sink.ended).toBeUndefined();
  });

  it('a live subscriber over the bound is ended with the contract slow-consumer close; a reading one keeps receiving', async () => {
    const { hub, feed, append } = await start();
    const slow = await subscribe(hub, feed);
    const reader = await subscribe(hub, feed);
    append(1);
    await until(() => slow.sink.messages.length === 1, 'the first article');
    slow.sink.backlog = MAX_BUFFERED + 1;
    append(2);
    await until(() => reader.sink.messages.length === 3, 'the reader');
    expect(slow.sink.ended?.spec).toEqual(stream.closeCodes.slowConsumer);
    expect(slow.sink.messages).toHaveLength(1);
    expect(hub.has(slow.sub)).toBe(false);
    expect(hub.size).toBe(1);
  });

  it('a replaying subscriber that stopped reading is ended when a live article concerns it', async () => {
    const { hub, feed, append } = await start();
    append(2 * REPLAY_PAGE);
    const stalled = await subscribe(hub, feed, { after: '0'.repeat(26) });
    stalled.sink.backlog = MAX_BUFFERED / 2 + 1; // it stops reading: the replay waits after its first page
    await until(() => stalled.sink.messages.length === REPLAY_PAGE, 'the first page');
    stalled.sink.backlog = MAX_BUFFERED + 1; // still not reading, the page piles up past the bound
    await new Promise((r) => setTimeout(r, 20));
    expect(stalled.sink.ended).toBeUndefined(); // the bound is judged when something more is owed to it
    append(1);
    await until(() => stalled.sink.ended !== undefined, 'the slow-consumer close');
    expect(stalled.sink.ended!.spec).toEqual(stream.closeCodes.slowConsumer);
  });

  it('a subscriber whose replay cannot read the feed is ended with the adapter close for the cause', async () => {
    const feed = new MemoryFeed(100);
    // The replay's start is found (single-entry reads), then reading its pages fails.
    const failing = {
      latestSeq: () => feed.latestSeq(),
      feedAfter: async (seq: number, limit: number) => {
        if (limit === 1) return feed.feedAfter(seq, limit);
        throw new Error('feed down');
      },
    };
    const hub = new DeliveryHub<RecordingSink>({
      feed: failing,
      clock: Date.now,
      feedPollMs: 1000,
      maxBufferedBytes: MAX_BUFFERED,
      slowClose: stream.closeCodes.slowConsumer,
      replayFailedClose: (e) => ({ code: 1011, reason: (e as Error).message }),
      now: () => performance.now(),
      defer: (fn) => setImmediate(fn),
      log: silentLog,
    });
    hubs.push(hub);
    await hub.ready;
    for (let i = 0; i < 3; i++) feed.append(article());
    const sink = new RecordingSink();
    hub.subscribe(sink, { fromSeq: 3, withTickers: true, tier: 'max', after: '0'.repeat(26) });
    await until(() => sink.ended !== undefined, 'the close');
    expect(sink.ended!.spec).toEqual({ code: 1011, reason: 'feed down' });
    expect(hub.size).toBe(0);
  });
});
