/** The feed poller reads the feed when woken by a notification bus, not only on its timer. */
import { describe, expect, it, vi } from 'vitest';
import { FeedPoller, WAKE_RETRY_MS } from '../../src/delivery/feed.js';
import type { FeedEntry } from '../../src/store/ports/index.js';
import { until } from '../support/wait.js';
import { silentLog } from '../../src/domain/log.js';
import { recordLog } from '../support/log.js';

function feed() {
  const entries: FeedEntry[] = [];
  return {
    entries,
    add(n: number) {
      for (let i = 0; i < n; i++) {
        const seq = entries.length + 1;
        entries.push({
          seq,
          article: {
            id: String(seq),
            content: 'x',
            urgency: 'regular',
            sentiment: null,
            published_at: null,
            received_at: '2026-11-21T12:00:00Z',
            source: null,
            url: null,
            tickers: [],
          },
        });
      }
    },
    articles: {
      feedAfter: async (seq: number, limit: number) => entries.filter((e) => e.seq > seq).slice(0, limit),
      latestSeq: async () => entries.length,
    },
  };
}

describe('FeedPoller.wake: a commit notification delivers at once', () => {
  it('delivers on wake although the timer is an hour away, in order, nothing twice', async () => {
    const f = feed();
    const delivered: number[] = [];
    const poller = new FeedPoller({
      articles: f.articles,
      intervalMs: 3_600_000,
      deliver: (b) => delivered.push(...b.map((e) => e.seq)),
      hasListeners: () => true,
      log: silentLog,
    });
    await poller.start();
    f.add(3);
    poller.wake();
    poller.wake(); // coalesced with the first
    await until(() => delivered.length >= 3, 'three articles');
    expect(delivered).toEqual([1, 2, 3]);
    f.add(2);
    poller.wake();
    await until(() => delivered.length >= 5, 'five articles');
    expect(delivered).toEqual([1, 2, 3, 4, 5]);
    await poller.stop();
  });

  it('runs one more poll when woken during a poll', async () => {
    const f = feed();
    const delivered: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const waiting = new Promise<void>((r) => (entered = r));
    const articles = {
      latestSeq: f.articles.latestSeq,
      feedAfter: async (seq: number, limit: number) => {
        const page = f.articles.feedAfter(seq, limit); // what is committed when the poll reads
        entered();
        await gate;
        return page;
      },
    };
    const poller = new FeedPoller({
      articles,
      intervalMs: 3_600_000,
      deliver: (b) => delivered.push(...b.map((e) => e.seq)),
      hasListeners: () => true,
      log: silentLog,
    });
    await poller.start();
    f.add(1);
    poller.wake();
    await waiting; // the first poll is waiting on the gate
    f.add(1);
    poller.wake(); // arrives during the poll
    release();
    await until(() => delivered.length >= 2, 'two articles');
    expect(delivered).toEqual([1, 2]);
    await poller.stop();
  });
});

describe('FeedPoller.wake: a storm of wakes costs one read, not a timer per wake', () => {
  // A data directory watch fires on every page SQLite writes: thousands of wakes a second during a large
  // ingest. Each re-armed a timer (cleared, then set again): tens of MB of garbage per poll of a big feed.
  it('10,000 wakes while a read is already due arm one timer and run one read', async () => {
    const f = feed();
    let reads = 0;
    const articles = {
      latestSeq: f.articles.latestSeq,
      feedAfter: async (seq: number, limit: number) => (reads++, f.articles.feedAfter(seq, limit)),
    };
    const delivered: number[] = [];
    const poller = new FeedPoller({
      articles,
      intervalMs: 3_600_000,
      deliver: (b) => delivered.push(...b.map((e) => e.seq)),
      hasListeners: () => true,
      log: silentLog,
    });
    await poller.start();
    f.add(2);
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      for (let i = 0; i < 10_000; i++) poller.wake();
      expect(timers).toHaveBeenCalledTimes(1);
    } finally {
      timers.mockRestore();
    }
    await until(() => delivered.length >= 2, 'two articles');
    expect(delivered).toEqual([1, 2]);
    expect(reads).toBe(1);
    await poller.stop();
  });
});

describe('FeedPoller.wake: a wake that comes before the commit is visible still delivers at once', () => {
  it('reads again shortly after a woken read that found nothing, long before the timer', async () => {
    const f = feed();
    const delivered: number[] = [];
    let reads = 0;
    const articles = {
      latestSeq: f.articles.latestSeq,
      // The commit becomes visible to readers only on the third read after the wake-up.
      feedAfter: async (seq: number, limit: number) => (++reads >= 3 ? f.articles.feedAfter(seq, limit) : []),
    };
    const poller = new FeedPoller({
      articles,
      intervalMs: 3_600_000,
      deliver: (b) => delivered.push(...b.map((e) => e.seq)),
      hasListeners: () => true,
      log: silentLog,
    });
    await poller.start();
    f.add(1);
    poller.wake();
    await until(() => delivered.length >= 1, 'the article');
    expect(delivered).toEqual([1]);
    expect(reads).toBe(3);
    await poller.stop();
  });

  it('stops reading again after the retries when nothing comes (a write that was not an article)', async () => {
    const f = feed();
    let reads = 0;
    const articles = {
      latestSeq: f.articles.latestSeq,
      feedAfter: async (seq: number, limit: number) => {
        reads++;
        return f.articles.feedAfter(seq, limit);
      },
    };
    const poller = new FeedPoller({
      articles,
      intervalMs: 3_600_000,
      deliver: () => {},
      hasListeners: () => true,
      log: silentLog,
    });
    await poller.start();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      poller.wake();
      const allRetries = WAKE_RETRY_MS.reduce((a, b) => a + b, 0);
      await vi.advanceTimersByTimeAsync(allRetries);
      expect(reads).toBe(1 + WAKE_RETRY_MS.length); // the wake's read and every retry happened
      await vi.advanceTimersByTimeAsync(100 * allRetries); // the timer is an hour away
      expect(reads).toBe(1 + WAKE_RETRY_MS.length); // and nothing after them
    } finally {
      vi.useRealTimers();
    }
    await poller.stop();
  });
});

describe('FeedPoller: a failed read is logged under its reader, and the next wake reads again', () => {
  it('names the reader (webhooks) in the log line, then delivers once the feed answers', async () => {
    const f = feed();
    let failing = true;
    const articles = {
      ...f.articles,
      feedAfter: async (seq: number, limit: number) =>
        failing ? Promise.reject(new Error('connection lost')) : f.articles.feedAfter(seq, limit),
    };
    const lines: string[] = [];
    const delivered: number[] = [];
    const poller = new FeedPoller({
      articles,
      intervalMs: 3_600_000,
      deliver: (b) => delivered.push(...b.map((e) => e.seq)),
      hasListeners: () => true,
      log: recordLog(lines),
      label: 'webhooks',
    });
    await poller.start();
    f.add(1);
    poller.wake();
    await until(() => lines.length > 0, 'the failure logged');
    expect(lines[0]).toBe('feed poll failed {"reader":"webhooks","err":"connection lost"}');
    failing = false;
    poller.wake();
    await until(() => delivered.length === 1, 'the article once the feed answers');
    await poller.stop();
  });
});
