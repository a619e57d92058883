/**
 * Resuming (asyncapi.yaml "Resuming without a gap"): `after=<id>` replays, oldest first, every article
 * after it that the key's lookback window holds, then continues live with no gap and no duplicate.
 */
import { describe, expect, it } from 'vitest';
import { streamRules } from '../../generated/stream.js';
import { plans } from '../../src/contract/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { connect, connectAdmitted, useStreamHarness, waitFor, type StreamHarness } from './support.js';

const ctx = useStreamHarness({ feedPollMs: 20 });

/** Every article id in the store, oldest first. */
async function allIds(h: StreamHarness): Promise<string[]> {
  const ids: string[] = [];
  for (let seq = 0; ;) {
    const page = await h.store.articles.feedAfter(seq, 1000);
    if (page.length === 0) return ids;
    ids.push(...page.map((e) => e.article.id));
    seq = page[page.length - 1]!.seq;
  }
}

const withAfter = (h: StreamHarness, after: string) => `${h.url}?after=${after}`;

describe('resume: after=<id> replays exactly the missed articles in order, then continues live', () => {
  it('replays the articles after the id, oldest first, then delivers new ones', async () => {
    await ctx.h.ingest(Array.from({ length: 7 }, (_, i) => ({ content: `before ${i}` })));
    const ids = await allIds(ctx.h);
    const c = await connectAdmitted(ctx.h, { url: withAfter(ctx.h, ids[2]!), key: (await ctx.h.key('pro')).key });
    await c.received(4);
    await ctx.h.ingest([{ content: 'live 0' }, { content: 'live 1' }]);
    const got = await c.received(6);
    expect(got.map((m) => m.content)).toEqual(['before 3', 'before 4', 'before 5', 'before 6', 'live 0', 'live 1']);
    expect(got.map((m) => m.id)).toEqual([...ids.slice(3), ...(await allIds(ctx.h)).slice(7)]);
  });

  it('replays nothing when the id is the newest one, and still delivers what comes next', async () => {
    await ctx.h.ingest([{ content: 'a' }, { content: 'b' }]);
    const ids = await allIds(ctx.h);
    const c = await connectAdmitted(ctx.h, { url: withAfter(ctx.h, ids[1]!), key: (await ctx.h.key('max')).key });
    await ctx.h.ingest([{ content: 'c' }]);
    expect((await c.received(1)).map((m) => m.content)).toEqual(['c']);
  });

  it('accepts an id that is no stored article: it reads as a position in time', async () => {
    await ctx.h.ingest([{ content: 'a' }]);
    ctx.h.clock.advance(1000);
    await ctx.h.ingest([{ content: 'b' }]);
    const [a] = await allIds(ctx.h);
    // The same millisecond as `a`, above every id of that millisecond: after `a`, before `b`.
    const between = a!.slice(0, 10) + 'ZZZZZZZZZZZZZZZZ';
    const c = await connectAdmitted(ctx.h, { url: withAfter(ctx.h, between), key: (await ctx.h.key('pro')).key });
    expect((await c.received(1)).map((m) => m.content)).toEqual(['b']);
  });
});

describe('resume: the seam holds under concurrent inserts (no gap, no duplicate)', () => {
  it('a client connecting with after= while another writer inserts continuously gets the inserted sequence exactly', async () => {
    const writer = new SqliteStore(ctx.h.file); // another connection to the file, like another process
    await ctx.h.ingest([{ content: 'start' }]);
    const [start] = await allIds(ctx.h);
    let stop = false;
    let n = 0;
    const inserting = (async () => {
      while (!stop) {
        await writer.articles.insert(
          [{ content: `n${n++}`, urgency: 'regular', sentiment: null, published_at: null, tickers: [] }],
          ctx.h.clock.fn,
        );
        if (n % 5 === 0) await new Promise((r) => setImmediate(r));
      }
    })();
    const { key } = await ctx.h.key('pro');
    const clients = [];
    // Several connections of several accounts, each opened at a different moment of the insert run.
    for (let i = 0; i < 5; i++) {
      await waitFor(() => n >= 50 * (i + 1), 'inserts');
      clients.push(
        await connectAdmitted(ctx.h, {
          url: withAfter(ctx.h, start!),
          key: i === 0 ? key : (await ctx.h.key('pro')).key,
          ip: `127.0.8.${i + 1}`,
        }),
      );
    }
    await waitFor(() => n >= 400, 'inserts after the last connect');
    stop = true;
    await inserting;
    writer.close();
    const expected = (await allIds(ctx.h)).slice(1);
    for (const c of clients) {
      const got = await c.received(expected.length, 10_000);
      expect(got.map((m) => m.id)).toEqual(expected);
    }
  });
});

describe('resume: an after older than the lookback window replays only the window', () => {
  it('leaves out what the key may no longer see, and replays the rest', async () => {
    const windowMs = plans.pro.lookbackHours * 3600_000;
    await ctx.h.ingest([{ content: 'too old' }]);
    ctx.h.clock.advance(1000);
    await ctx.h.ingest([{ content: 'old but inside' }]);
    const [oldest] = await allIds(ctx.h);
    // "too old" leaves the window by 1 ms; "old but inside" is still 999 ms inside.
    ctx.h.clock.advance(windowMs - 1000 + 1);
    await ctx.h.ingest([{ content: 'recent' }]);
    const first = await connectAdmitted(ctx.h, {
      url: withAfter(ctx.h, '0'.repeat(26)),
      key: (await ctx.h.key('pro')).key,
      ip: '127.0.7.1',
    });
    expect((await first.received(2)).map((m) => m.content)).toEqual(['old but inside', 'recent']);
    // The id of the article that left the window: the same.
    const second = await connectAdmitted(ctx.h, {
      url: withAfter(ctx.h, oldest!),
      key: (await ctx.h.key('max')).key,
      ip: '127.0.7.2',
    });
    expect((await second.received(2)).map((m) => m.content)).toEqual(['old but inside', 'recent']);
  });
});

describe('tickers: only articles about one of the symbols, in the replay and live; max keys only', () => {
  const about = (...symbols: string[]) => symbols.map((ticker) => ({ ticker, sentiment: 'neutral' as const }));

  it('filters the replay and the live delivery of a max key', async () => {
    await ctx.h.ingest([
      { content: 'r apple', tickers: about('AAPL') },
      { content: 'r none' },
      { content: 'r msft+nvda', tickers: about('MSFT', 'NVDA') },
      { content: 'r nvda', tickers: about('NVDA') },
    ]);
    const [first] = await allIds(ctx.h);
    const filtered = await connectAdmitted(ctx.h, {
      url: `${withAfter(ctx.h, first!)}&tickers=MSFT,AAPL,TSLA`,
      key: (await ctx.h.key('max')).key,
    });
    const everything = await connectAdmitted(ctx.h, { key: (await ctx.h.key('max')).key });
    await filtered.received(1);
    await ctx.h.ingest([
      { content: 'l tsla', tickers: about('TSLA') },
      { content: 'l none' },
      { content: 'l amd', tickers: about('AMD') },
    ]);
    await ctx.h.ingest([{ content: 'l aapl', tickers: about('AMD', 'AAPL') }]);
    await everything.received(4);
    const got = await filtered.received(3);
    expect(got.map((m) => m.content)).toEqual(['r msft+nvda', 'l tsla', 'l aapl']);
    // Filtered messages are full max articles (with tickers).
    expect(got.every((m) => Array.isArray(m.tickers))).toBe(true);
    expect(everything.messages.map((m) => m.content)).toEqual(['l tsla', 'l none', 'l amd', 'l aapl']);
  });

  it('filters live delivery without after=', async () => {
    const c = await connectAdmitted(ctx.h, { url: `${ctx.h.url}?tickers=NVDA`, key: (await ctx.h.key('max')).key });
    await ctx.h.ingest([{ content: 'x' }, { content: 'nvda', tickers: about('NVDA') }, { content: 'y' }]);
    await ctx.h.ingest([{ content: 'z' }, { content: 'nvda again', tickers: about('NVDA') }]);
    expect((await c.received(2)).map((m) => m.content)).toEqual(['nvda', 'nvda again']);
  });

  it('refuses tickers with a pro key (the contract reason), and leaves the account slot free', async () => {
    const { key } = await ctx.h.key('pro');
    const refused = connect(`${ctx.h.url}?tickers=AAPL`, { key });
    expect(await refused.closed).toEqual(streamRules.closeCodes.tickersRequireMax);
    expect(ctx.h.slots.inUse()).toBe(0);
    const ok = await connectAdmitted(ctx.h, { key });
    expect(ok.isOpen).toBe(true);
  });
});

describe('malformed parameters close with 1008 "Invalid stream parameter" and take no slot', () => {
  const cases: [string, string][] = [
    ['after that is not an id', 'after=not-an-id'],
    ['after with a letter outside the id alphabet', `after=${'0'.repeat(25)}U`],
    ['after above the largest id', `after=8${'0'.repeat(25)}`],
    ['after empty', 'after='],
    ['after twice', `after=${'0'.repeat(26)}&after=${'1'.repeat(26)}`],
    ['tickers in lower case', 'tickers=aapl'],
    ['tickers empty', 'tickers='],
    ['tickers with an empty item', 'tickers=AAPL,,MSFT'],
    ['tickers with a symbol too long', `tickers=${'A'.repeat(17)}`],
    [
      'tickers with one symbol too many',
      `tickers=${Array.from({ length: streamRules.tickersMaxItems + 1 }, (_, i) => `T${i}`).join(',')}`,
    ],
    ['tickers twice', 'tickers=AAPL&tickers=MSFT'],
    ['a misspelt parameter (it would otherwise give an unfiltered stream)', 'tikers=AAPL'],
    ['an unknown parameter', 'foo=1'],
  ];
  for (const [what, query] of cases) {
    it(`${what} (max key)`, async () => {
      const c = connect(`${ctx.h.url}?${query}`, { key: (await ctx.h.key('max')).key });
      expect(await c.closed).toEqual(streamRules.closeCodes.invalidParameter);
      expect(ctx.h.slots.inUse()).toBe(0);
    });
  }

  it(`accepts exactly ${streamRules.tickersMaxItems} symbols`, async () => {
    const symbols = Array.from({ length: streamRules.tickersMaxItems }, (_, i) => `T${i}`).join(',');
    const c = await connectAdmitted(ctx.h, {
      url: `${ctx.h.url}?tickers=${symbols}`,
      key: (await ctx.h.key('max')).key,
    });
    expect(c.isOpen).toBe(true);
  });

  it('judges the key and the plan first: an invalid key with a bad parameter is "Invalid API key"', async () => {
    const c = connect(`${ctx.h.url}?after=bad`, { key: 'fns_live_nobody' });
    expect((await c.closed).reason).toBe(streamRules.closeCodes.invalidKey.reason);
    const starter = connect(`${ctx.h.url}?after=bad`, { key: (await ctx.h.key('starter')).key, ip: '127.0.7.9' });
    expect((await starter.closed).reason).toBe(streamRules.closeCodes.planRequired.reason);
  });

  it('a malformed tickers with a pro key is a malformed parameter, not a plan question', async () => {
    const c = connect(`${ctx.h.url}?tickers=aapl`, { key: (await ctx.h.key('pro')).key });
    expect(await c.closed).toEqual(streamRules.closeCodes.invalidParameter);
  });
});
