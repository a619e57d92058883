/**
 * Gap-free paging, the ticker filter and search paging over REST (openapi.yaml 1.1.0), one
 * describe per rule of the listNews / searchNews descriptions. Numbers and texts come from the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  limitBounds,
  minRelevanceDefault,
  openapiDocument,
  operationParameters,
  plans,
  problems,
  searchRankingMax,
} from '../../src/contract/index.js';
import { linkHeader, listNext, searchNext } from '../../src/http/paging.js';
import { get, startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let ipSeq = 0;
const ip = () => `127.2.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;
const H = 3600_000;
const param = (operationId: string, name: string) =>
  operationParameters(operationId).find((p) => p.name === name)!.schema;
const SEARCH_LIMIT_DEFAULT: number = param('searchNews', 'limit').default;
const LOOKBACK_MS = (tier: 'starter' | 'pro' | 'max') => plans[tier].lookbackHours * H;

beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => svc.close());

const call = (path: string, key: string) => get(svc.port, path, { key, ip: ip() });
const ids = (r: { body: any }) => (r.body.articles as { id: string }[]).map((a) => a.id);

function expectProblem(r: { status: number; headers: any; body: any }, kind: keyof typeof problems) {
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(r.body).toEqual(problems[kind]);
  expect(r.status).toBe(problems[kind].status);
}

/** `n` articles sharing one received_at (the clock's now), with tickers cycling through `symbols`. */
async function burst(n: number, symbols: string[][] = [[]], at = svc.clock.now) {
  await svc.ingest(
    Array.from({ length: n }, (_, i) => ({
      content: `burst article ${i}`,
      urgency: i % 4 === 0 ? 'breaking' : 'regular',
      tickers: symbols[i % symbols.length]!.map((ticker) => ({ ticker, sentiment: 'neutral' as const })),
    })),
    at,
  );
}

/** Every id of the archive, oldest first (straight from the store). */
async function archive(): Promise<string[]> {
  return (await svc.store.articles.list({ afterMs: 0, limit: limitBounds.max })).map((a) => a.id).reverse();
}

describe('after: the articles after that id, oldest first, and next always the page to poll', () => {
  it('follows next through a burst sharing one received_at, larger than limit: every article once, in order', async () => {
    const k = (await svc.key('max')).key;
    await burst(3);
    const [start] = await archive();
    await burst(23);
    const limit = 5;
    const seen: string[] = [];
    let path: string | null = `/v1/news?limit=${limit}&after=${start}`;
    let last: any;
    for (let i = 0; i < 20 && path; i++) {
      last = await call(path, k);
      expect(last.status).toBe(200);
      seen.push(...ids(last));
      // next is never null with after; it is also the Link header.
      expect(last.body.next).toMatch(/^\/v1\/news\?limit=5&after=/);
      expect(last.headers.link).toBe(linkHeader(last.body.next));
      if (last.body.count < limit) break;
      path = last.body.next;
    }
    expect(seen).toEqual((await archive()).filter((id) => id > start!));
    // At the end: an empty page whose next is the same page, to poll again later.
    const end = await call(last.body.next, k);
    expect(end.body).toEqual({ count: 0, articles: [], next: last.body.next });
    await burst(2);
    expect((await call(end.body.next, k)).body.count).toBe(2);
  });
});

describe('before: the articles before that id, newest first; next while pages are full, null at the end', () => {
  it('pages backwards through the window and ends with next null and no Link header', async () => {
    const k = (await svc.key('pro')).key;
    await burst(12);
    const all = await archive();
    const seen: string[] = [];
    let r = await call('/v1/news?limit=5', k);
    for (let i = 0; i < 10; i++) {
      seen.push(...ids(r));
      if (r.body.next === null) break;
      expect(r.body.next).toBe(`/v1/news?limit=5&before=${ids(r).at(-1)}`);
      expect(r.headers.link).toBe(linkHeader(r.body.next));
      r = await call(r.body.next, k);
    }
    expect(seen).toEqual([...all].reverse());
    expect(r.body.next).toBeNull();
    expect(r.headers.link).toBeUndefined();
  });
  it('a full last page still gets a next, which answers an empty page with next null', async () => {
    const k = (await svc.key('max')).key;
    await burst(4);
    const first = await call('/v1/news?limit=4', k);
    expect(first.body.next).not.toBeNull();
    expect((await call(first.body.next, k)).body).toEqual({ count: 0, articles: [], next: null });
  });
});

describe('after and before cannot be combined: 400 with the contract text, counted', () => {
  it('answers the cursorConflict problem with rate-limit headers', async () => {
    const k = (await svc.key('max')).key;
    await burst(1);
    const [id] = await archive();
    const r = await call(`/v1/news?after=${id}&before=${id}`, k);
    expectProblem(r, 'cursorConflict');
    expect(r.headers['x-ratelimit-remaining']).toBe(String(plans.max.rateLimit - 1));
  });
  it('answers a malformed id with a 400 naming the parameter', async () => {
    const k = (await svc.key('max')).key;
    const r = await call('/v1/news?after=not-an-id', k);
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/^after must be /);
  });
});

describe('tickers: max keys only; other plans get 403 with the contract text, not counted', () => {
  it.each(['starter', 'pro'] as const)(
    'refuses a %s key before the rate limit: its one request of the minute is still free',
    async (tier) => {
      const k = (await svc.key(tier)).key;
      for (let i = 0; i < plans[tier].rateLimit + 1; i++) {
        const r = await call('/v1/news?tickers=AAPL', k);
        expectProblem(r, 'tickerFilterMaxPlanOnly');
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect((await call('/v1/news', k)).status).toBe(200);
    },
  );
  it('refuses tickers from a non-max key even when its value is malformed (tier access comes first)', async () => {
    const k = (await svc.key('pro')).key;
    expectProblem(await call('/v1/news?tickers=aapl', k), 'tickerFilterMaxPlanOnly');
  });
});

describe('tickers filter: the articles about at least one of the listed instruments', () => {
  it('keeps exactly those articles, each once, on every page, and next keeps the filter', async () => {
    const k = (await svc.key('max')).key;
    await burst(30, [['AAPL'], ['MSFT'], ['AAPL', 'MSFT'], [], ['EUR/USD']]);
    const stored = await svc.store.articles.list({ afterMs: 0, limit: limitBounds.max });
    const about = (symbols: string[]) =>
      stored.filter((a) => a.tickers.some((t) => symbols.includes(t.ticker))).map((a) => a.id);
    for (const symbols of [['AAPL'], ['AAPL', 'MSFT'], ['EUR/USD'], ['NVDA']]) {
      const seen: string[] = [];
      let path: string | null = `/v1/news?limit=7&tickers=${symbols.join(',')}`;
      while (path) {
        const r = await call(path, k);
        expect(r.status).toBe(200);
        expect(r.body.articles.every((a: any) => a.tickers.some((t: any) => symbols.includes(t.ticker)))).toBe(true);
        seen.push(...ids(r));
        if (r.body.next) expect(r.body.next).toContain(`tickers=${symbols.join(',')}`);
        path = r.body.next;
        svc.clock.advance(1500); // stay inside the rate limit
      }
      expect(seen).toEqual(about(symbols));
    }
  });
  it('never answers a filtered or cursor request from the first-page cache', async () => {
    const k = (await svc.key('max')).key;
    await burst(6, [['AAPL'], []]);
    const first = await call('/v1/news', k);
    expect(first.body.count).toBe(6);
    const filtered = await call('/v1/news?tickers=AAPL', k);
    expect(filtered.body.count).toBe(3);
    const [oldest] = await archive();
    expect((await call(`/v1/news?before=${ids(first)[0]}`, k)).body.count).toBe(5);
    expect((await call(`/v1/news?after=${oldest}`, k)).body.count).toBe(5);
    expect((await call('/v1/news', k)).body).toEqual(first.body);
  });
});

describe('min_relevance: the tickers filter keeps the articles where a listed instrument is that relevant', () => {
  /** Three articles naming AAPL: as a source (0.2), as another company of the headline (0.8), as the subject (1). */
  async function graded(): Promise<string[]> {
    await svc.ingest(
      [0.2, 0.8, 1].map((relevance, i) => ({
        content: `graded article ${i}`,
        urgency: 'regular' as const,
        tickers: [{ ticker: 'AAPL', sentiment: 'neutral' as const, relevance }],
      })),
      svc.clock.now,
    );
    return archive();
  }
  it(`applies the contract's default (${minRelevanceDefault}) when the request gives none`, async () => {
    const k = (await svc.key('max')).key;
    const [, co, subject] = await graded();
    expect(ids(await call('/v1/news?tickers=AAPL', k)).sort()).toEqual([co, subject].sort());
  });
  it('keeps every article naming the instrument with 0, only the subjects with 1, and next keeps the value', async () => {
    const k = (await svc.key('max')).key;
    const all = await graded();
    expect(ids(await call('/v1/news?tickers=AAPL&min_relevance=0', k)).sort()).toEqual([...all].sort());
    svc.clock.advance(1500);
    expect(ids(await call('/v1/news?tickers=AAPL&min_relevance=1', k))).toEqual([all[2]]);
    svc.clock.advance(1500);
    const page = await call('/v1/news?tickers=AAPL&min_relevance=.1&limit=1', k);
    expect(page.body.next).toContain('tickers=AAPL&min_relevance=0.1&before=');
  });
  it('filters search results the same way', async () => {
    const k = (await svc.key('max')).key;
    const [source, co, subject] = await graded();
    await svc.worker.drain();
    const r = await call('/v1/news/search?q=graded%20article&tickers=AAPL&min_relevance=0.5', k);
    expect(r.status).toBe(200);
    expect(ids(r)).not.toContain(source);
    expect(ids(r).every((id: string) => id === co || id === subject)).toBe(true);
  });
  it('answers min_relevance without tickers with a 400 naming the rule', async () => {
    const k = (await svc.key('max')).key;
    expectProblem(await call('/v1/news?min_relevance=0.5', k), 'relevanceWithoutTickers');
    expectProblem(await call('/v1/news/search?q=fed&min_relevance=0.5', k), 'relevanceWithoutTickers');
  });
  it.each(['1.5', '-0.1', 'abc', '1e-1', '', '0.5,0.6'])(
    'answers min_relevance=%s with a 400 naming the parameter and its rule',
    async (v) => {
      const k = (await svc.key('max')).key;
      const r = await call(`/v1/news?tickers=AAPL&min_relevance=${encodeURIComponent(v)}`, k);
      expect(r.status).toBe(400);
      expect(r.body.detail).toBe('min_relevance must be a decimal number from 0 to 1, e.g. 0.8');
    },
  );
  it('refuses tickers with min_relevance from a pro key (403, as tickers alone)', async () => {
    const k = (await svc.key('pro')).key;
    expectProblem(await call('/v1/news?tickers=AAPL&min_relevance=0.2', k), 'tickerFilterMaxPlanOnly');
  });
  it('refuses min_relevance alone from a pro key as the ticker filter it belongs to (403, not counted)', async () => {
    const k = (await svc.key('pro')).key;
    const r = await call('/v1/news?min_relevance=0.5', k);
    expectProblem(r, 'tickerFilterMaxPlanOnly');
    expect(r.headers['x-ratelimit-remaining']).toBeUndefined();
  });
});

describe('the lookback window bounds every page: an after older than the window reads as its start', () => {
  it.each(['starter', 'pro'] as const)(
    'never returns an article older than the %s window, whatever the cursor',
    async (tier) => {
      const k = (await svc.key(tier)).key;
      const now = svc.clock.now;
      await burst(2, [[]], now - LOOKBACK_MS(tier) - 10 * H);
      const [veryOld] = await archive();
      await burst(2, [[]], now - LOOKBACK_MS(tier) + H);
      const inside = (await archive()).slice(2);
      const r = await call(`/v1/news?after=${veryOld}`, k);
      expect(ids(r)).toEqual(inside);
      svc.clock.advance(61_000);
      const back = await call(`/v1/news?before=${inside[1]}`, k);
      expect(ids(back)).toEqual([inside[0]]);
    },
  );
});

describe("next keeps the request's other parameters (limit, since, urgency, tickers) and moves the cursor", () => {
  it('writes them back in one order, values encoded only where they must be', async () => {
    const k = (await svc.key('max')).key;
    await burst(8, [['BRK.B']]);
    const since = new Date(svc.clock.now - H).toISOString().replace('Z', '+00:00');
    const r = await call(`/v1/news?tickers=BRK.B&urgency=regular&since=${since}&limit=2`, k);
    expect(r.body.count).toBe(2);
    expect(r.body.next).toBe(
      `/v1/news?limit=2&since=${since.replace('+', '%2B')}&urgency=regular&tickers=BRK.B&min_relevance=${minRelevanceDefault}&before=${ids(r)[1]}`,
    );
    const next = await call(r.body.next, k);
    expect(next.status).toBe(200);
    expect(next.body.articles.every((a: any) => a.urgency === 'regular')).toBe(true);
  });
  it('pure rule: with after always a link (the same after on an empty page); otherwise only after a full page', () => {
    expect(listNext({ limit: '3', after: 'A' }, 3, { count: 0, lastId: undefined })).toBe('/v1/news?limit=3&after=A');
    expect(listNext({ limit: '3', after: 'A' }, 3, { count: 1, lastId: 'B' })).toBe('/v1/news?limit=3&after=B');
    expect(listNext({ limit: '3' }, 3, { count: 2, lastId: 'B' })).toBeNull();
    expect(listNext({ limit: '3', before: 'Z' }, 3, { count: 3, lastId: 'C' })).toBe('/v1/news?limit=3&before=C');
    expect(listNext({ limit: '3', tickers: ['EUR/USD', 'X:Y'] }, 3, { count: 3, lastId: 'C' })).toBe(
      '/v1/news?limit=3&tickers=EUR/USD,X:Y&before=C',
    );
  });
});

describe('search paging: offset, offset + limit at most the ranking, next and Link', () => {
  it(`refuses offset + limit over ${searchRankingMax} with the contract text, counted`, async () => {
    const k = (await svc.key('max')).key;
    const r = await call(`/v1/news/search?q=fed&offset=${searchRankingMax - 10}&limit=11`, k);
    expectProblem(r, 'offsetPastRanking');
    expect(r.headers['x-ratelimit-remaining']).toBe(String(plans.max.rateLimit - 1));
    // With the default limit too.
    expectProblem(
      await call(`/v1/news/search?q=fed&offset=${searchRankingMax - SEARCH_LIMIT_DEFAULT + 1}`, k),
      'offsetPastRanking',
    );
    expect((await call(`/v1/news/search?q=fed&offset=${searchRankingMax - 10}&limit=10`, k)).status).toBe(200);
  });
  it('pages through the ranking with next: the pages together are the unpaged ranking', async () => {
    const k = (await svc.key('max')).key;
    await burst(12, [['AAPL'], ['MSFT']]);
    await svc.worker.drain();
    const whole = await call('/v1/news/search?q=burst+article&limit=12', k);
    expect(whole.body.count).toBe(12);
    const seen: string[] = [];
    let path: string | null = '/v1/news/search?q=burst+article&limit=5';
    while (path) {
      const r = await call(path, k);
      seen.push(...ids(r));
      if (r.body.next) expect(r.headers.link).toBe(linkHeader(r.body.next));
      else expect(r.headers.link).toBeUndefined();
      path = r.body.next;
    }
    expect(seen).toEqual(ids(whole));
    const filtered = await call('/v1/news/search?q=burst+article&tickers=MSFT', k);
    expect(ids(filtered)).toEqual(
      ids(whole).filter((_, i) => whole.body.articles[i].tickers.some((t: any) => t.ticker === 'MSFT')),
    );
    expect(filtered.body.next).toBeNull();
  });
  it('pure rule: next moves offset on, cuts limit at the end of the ranking, null when not full or at the end', () => {
    expect(searchNext({ q: 'a b', offset: 0 }, 30, 30)).toBe('/v1/news/search?q=a%20b&limit=30&offset=30');
    expect(searchNext({ q: 'x', offset: 60 }, 30, 30)).toBe(
      `/v1/news/search?q=x&limit=${searchRankingMax - 90}&offset=90`,
    );
    expect(searchNext({ q: 'x', offset: 0 }, 30, 29)).toBeNull();
    expect(searchNext({ q: 'x', offset: searchRankingMax - 10 }, 10, 10)).toBeNull();
  });
  it('keeps next within NextPage.maxLength for the longest q the contract admits', () => {
    const q = '\u{1F4C8}'.repeat(param('searchNews', 'q').maxLength);
    const next = searchNext({ q, offset: 0, tickers: Array(10).fill('ABCDEFGHIJKLMNOP') }, 1, 1)!;
    expect(next.length).toBeLessThanOrEqual(openapiDocument().components.schemas.NextPage.maxLength);
  });
});
