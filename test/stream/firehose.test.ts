/** The firehose: every article that enters the store, from any process, pushed to every open connection. */
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { FEED_PAGE } from '../../src/delivery/feed.js';
import { connectAdmitted, useStreamHarness } from './support.js';

const ctx = useStreamHarness();

describe('firehose: articles inserted by another process reach every open connection within one second', () => {
  it('delivers articles inserted by a second SqliteStore on the same file (like `fns articles ingest`) within 1 s', async () => {
    const pro = await connectAdmitted(ctx.h, { key: (await ctx.h.key('pro')).key, ip: '127.0.4.1' });
    const max = await connectAdmitted(ctx.h, { key: (await ctx.h.key('max')).key, ip: '127.0.4.2' });
    const cli = new SqliteStore(ctx.h.file);
    try {
      const insertedAt = Date.now();
      const [stored] = await cli.articles.insert(
        [
          {
            content: 'Nvidia beats',
            urgency: 'flash',
            sentiment: 'positive',
            published_at: null,
            tickers: [{ ticker: 'NVDA', sentiment: 'positive', relevance: 1 }],
          },
        ],
        ctx.h.clock.now,
      );
      await pro.received(1, 3000);
      await max.received(1, 3000);
      expect(pro.messages.map((m) => m.id)).toEqual([stored!.id]);
      expect(max.messages.map((m) => m.id)).toEqual([stored!.id]);
      expect(pro.receivedAt[0]! - insertedAt).toBeLessThan(1000);
      expect(max.receivedAt[0]! - insertedAt).toBeLessThan(1000);
    } finally {
      cli.close();
    }
  });

  it('pushes articles in store order, each once, across more than one feed page', async () => {
    const c = await connectAdmitted(ctx.h, { key: (await ctx.h.key('pro')).key });
    const n = FEED_PAGE * 2 + 17;
    const cli = new SqliteStore(ctx.h.file);
    try {
      await cli.articles.insert(
        Array.from({ length: n }, (_, i) => ({
          content: `item ${i}`,
          urgency: 'regular' as const,
          sentiment: null,
          published_at: null,
          tickers: [],
        })),
        ctx.h.clock.now,
      );
    } finally {
      cli.close();
    }
    const msgs = await c.received(n);
    expect(msgs.map((m) => m.content)).toEqual(Array.from({ length: n }, (_, i) => `item ${i}`));
  });

  it('starts at the end of the feed: articles stored before the connection are not replayed', async () => {
    await ctx.h.ingest([{ content: 'old news' }]);
    const c = await connectAdmitted(ctx.h, { key: (await ctx.h.key('pro')).key });
    await ctx.h.ingest([{ content: 'new news' }]);
    await c.received(1);
    expect(c.messages.map((m) => m.content)).toEqual(['new news']);
  });
});

describe('firehose: tickers are present for max keys and absent for pro keys on the same article', () => {
  it('sends the same article with tickers to max and without to pro', async () => {
    const pro = await connectAdmitted(ctx.h, { key: (await ctx.h.key('pro')).key, ip: '127.0.4.3' });
    const max = await connectAdmitted(ctx.h, { key: (await ctx.h.key('max')).key, ip: '127.0.4.4' });
    const tickers = [
      { ticker: 'NVDA', sentiment: 'positive' as const, relevance: 1 },
      { ticker: 'AMD', sentiment: 'neutral' as const, relevance: 1 },
    ];
    await ctx.h.ingest([{ content: 'Chip stocks rally', sentiment: 'positive', tickers }]);
    const [p] = await pro.received(1);
    const [m] = await max.received(1);
    expect(m.tickers).toEqual(tickers);
    expect('tickers' in p).toBe(false);
    const { tickers: _t, ...withoutTickers } = m;
    expect(p).toEqual(withoutTickers);
  });
});
