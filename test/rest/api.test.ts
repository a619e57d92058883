/** The REST API, in-process over real HTTP, one describe per rule of the spec and the contract. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitBounds, limits, operationParameters, plans, problems } from '../../src/contract/index.js';
import { get, startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let ipSeq = 0;
/** A fresh client address per use, so the IP guard only sees what a test means it to see. */
const ip = () => `127.1.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;
const H = 3600_000;
const DAY = 24 * H;

// Every plan and limit number below comes from the contract (openapi.yaml x-plans, x-limits, parameter schemas).
const WINDOW_MS = limits.rateWindowMs;
const WINDOW_S = WINDOW_MS / 1000;
const GUARD = limits.ipGuard;
const param = (operationId: string, name: string) =>
  operationParameters(operationId).find((p) => p.name === name)!.schema;
const LIST_LIMIT_DEFAULT: number = param('listNews', 'limit').default;
const Q = param('searchNews', 'q');
const LIMIT_RULE = `limit must be an integer between ${limitBounds.min} and ${limitBounds.max}`;
const Q_RULE = `a string of ${Q.minLength} to ${Q.maxLength} characters, not only spaces`;
/** A lookback as the docs say it: `24 hours`, `7 days`. */
const lookback = (hours: number) => (hours % 24 === 0 && hours > 24 ? `${hours / 24} days` : `${hours} hours`);
const perMinute = (n: number) => `${n} request${n === 1 ? '' : 's'}`;

beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => svc.close());

const call = (path: string, key?: string, from = ip()) =>
  get(svc.port, path, { ...(key !== undefined ? { key } : {}), ip: from });

function expectProblem(r: { status: number; headers: any; body: any }, kind: keyof typeof problems) {
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(r.body).toEqual(problems[kind]);
  expect(r.status).toBe(problems[kind].status);
}

describe('authentication: 401 Invalid API key, 403 API key is inactive', () => {
  it('answers 401 with the spec text when the key is missing', async () => {
    expectProblem(await call('/v1/news'), 'invalidApiKey');
  });
  it('answers 401 for an unknown key and for a sandbox (fns_test_) key', async () => {
    expectProblem(await call('/v1/news', 'fns_live_nope'), 'invalidApiKey');
    expectProblem(await call('/v1/account/usage', 'fns_test_max'), 'invalidApiKey');
  });
  it('answers 403 for a deactivated key on every endpoint, usage included, and 200 again once reactivated', async () => {
    const k = await svc.key('max');
    await svc.store.accounts.setKeyActive(k.key_id, false);
    for (const path of ['/v1/news', '/v1/news/search?q=fed', '/v1/account/usage'])
      expectProblem(await call(path, k.key), 'inactiveApiKey');
    await svc.store.accounts.setKeyActive(k.key_id, true);
    expect((await call('/v1/news', k.key)).status).toBe(200);
  });
  it('blocks a free key with 403 but lets it read its usage', async () => {
    const k = await svc.key('free');
    expectProblem(await call('/v1/news', k.key), 'inactiveApiKey');
    const usage = await call('/v1/account/usage', k.key);
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({ tier: 'free', rate_limit: plans.free.rateLimit, period_end: null });
  });
  it('checks the key before the parameters: a bad key with a bad limit is 401, not 400', async () => {
    expectProblem(await call(`/v1/news?limit=${limitBounds.min - 1}`, 'fns_live_nope'), 'invalidApiKey');
  });
});

describe('search is for the Max plan only', () => {
  it.each(['starter', 'pro'] as const)('answers 403 with the Max-plan text to a %s key', async (tier) => {
    expectProblem(await call('/v1/news/search?q=fed', (await svc.key(tier)).key), 'maxPlanOnly');
  });
  it('answers 403 with the Max-plan text to an expired key', async () => {
    const k = await svc.key('max');
    await svc.store.accounts.cancel(k.account_id, svc.clock.now);
    expectProblem(await call('/v1/news/search?q=fed', k.key), 'maxPlanOnly');
  });
});

describe(`rate limit: exact sliding window of ${WINDOW_S} s per key`, () => {
  const STARTER = plans.starter.rateLimit;
  const PRO = plans.pro.rateLimit;
  it(`admits ${perMinute(STARTER)} a minute for starter, then 429 with Retry-After and rate-limit headers`, async () => {
    const k = await svc.key('starter');
    const first = await call('/v1/news', k.key);
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe(String(STARTER));
    expect(first.headers['x-ratelimit-remaining']).toBe(String(STARTER - 1));
    expect(Number(first.headers['x-ratelimit-reset'])).toBe(Math.ceil((svc.clock.now + WINDOW_MS) / 1000));
    for (let i = 1; i < STARTER; i++) expect((await call('/v1/news', k.key)).status).toBe(200);
    svc.clock.advance(20_000);
    const second = await call('/v1/news', k.key);
    expectProblem(second, 'rateLimitExceeded');
    expect(second.headers['retry-after']).toBe(String(WINDOW_S - 20));
    svc.clock.advance(WINDOW_MS - 20_000 - 1);
    expect((await call('/v1/news', k.key)).status).toBe(429);
    svc.clock.advance(1);
    expect((await call('/v1/news', k.key)).status).toBe(200);
  });
  it(`never admits more than ${PRO} in any ${WINDOW_S} s for pro, even across a minute boundary`, async () => {
    const k = await svc.key('pro');
    const step = Math.min(1000, Math.floor(WINDOW_MS / (PRO + 1))); // all of them inside one window
    const statuses: number[] = [];
    for (let i = 0; i < PRO; i++) {
      statuses.push((await call('/v1/news', k.key)).status);
      svc.clock.advance(step);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect((await call('/v1/news', k.key)).status).toBe(429);
    svc.clock.advance(WINDOW_MS - 1 - PRO * step); // 1 ms before the first request leaves the window
    expect((await call('/v1/news', k.key)).status).toBe(429);
    svc.clock.advance(1); // the first request has left the window: exactly one slot
    expect((await call('/v1/news', k.key)).status).toBe(200);
    expect((await call('/v1/news', k.key)).status).toBe(429);
  });
  it('does not count the usage endpoint, nor refused requests', async () => {
    const k = await svc.key('starter');
    for (let i = 0; i < STARTER + 4; i++) expect((await call('/v1/account/usage', k.key)).status).toBe(200);
    expect((await call('/v1/news/search?q=fed', k.key)).status).toBe(403);
    for (let i = 0; i < STARTER; i++) expect((await call('/v1/news', k.key)).status).toBe(200);
    expect((await call('/v1/news', k.key)).status).toBe(429);
    expect((await call('/v1/news', k.key)).status).toBe(429);
    svc.clock.advance(WINDOW_MS);
    expect((await call('/v1/news', k.key)).status).toBe(200);
  });
  it('counts a request that fails validation (400)', async () => {
    const k = await svc.key('starter');
    const bad = await call(`/v1/news?limit=${limitBounds.min - 1}`, k.key);
    expect(bad.status).toBe(400);
    expect(bad.headers['x-ratelimit-remaining']).toBe(String(STARTER - 1));
    for (let i = 1; i < STARTER; i++) expect((await call('/v1/news', k.key)).status).toBe(200);
    expect((await call('/v1/news', k.key)).status).toBe(429);
  });
  it('keeps one limit per key: two keys of one account count separately', async () => {
    const a = await svc.key('starter', 'acct_two_keys');
    const b = await svc.key('starter', 'acct_two_keys');
    for (let i = 0; i < STARTER; i++) expect((await call('/v1/news', a.key)).status).toBe(200);
    expect((await call('/v1/news', a.key)).status).toBe(429);
    expect((await call('/v1/news', b.key)).status).toBe(200);
  });
});

describe('validation: 400 problem naming the parameter and the rule', () => {
  const cases: [string, string][] = [
    [`/v1/news?limit=${limitBounds.min - 1}`, LIMIT_RULE],
    [`/v1/news?limit=${limitBounds.max + 1}`, LIMIT_RULE],
    ['/v1/news?limit=ten', LIMIT_RULE],
    ['/v1/news?limit=2.5', LIMIT_RULE],
    ['/v1/news?limit=1&limit=2', 'limit must be given once'],
    ['/v1/news?urgency=urgent', 'urgency must be one of breaking, flash, regular'],
    ['/v1/news?since=yesterday', 'since must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z'],
    [
      '/v1/news?since=2026-11-21T10:00:00',
      'since must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
    ],
    ['/v1/news?page=2', 'page is not a parameter of this operation'],
    ['/v1/news/search', `q is required and must be ${Q_RULE}`],
    [`/v1/news/search?q=${'a'.repeat(Q.minLength - 1)}`, `q must be ${Q_RULE}`],
    [`/v1/news/search?q=${'x'.repeat(Q.maxLength + 1)}`, `q must be ${Q_RULE}`],
    ['/v1/news/search?q=%20%20%20', `q must be ${Q_RULE}`],
    [`/v1/news/search?q=fed&limit=${limitBounds.max * 5}`, LIMIT_RULE],
    ['/v1/account/usage?verbose=1', 'verbose is not a parameter of this operation'],
    ['/v1/news?__proto__=1', '__proto__ is not a parameter of this operation'],
    ['/v1/news?limit=0x10', LIMIT_RULE],
    ['/v1/news?limit=1e1', LIMIT_RULE],
    ['/v1/news?limit=%2B5', LIMIT_RULE],
    [
      '/v1/news?since=2026-11-21T10:00:00%2B24:00',
      'since must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
    ],
    [
      '/v1/news?since=2026-11-21T10:00:00%2B02',
      'since must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
    ],
  ];
  it.each(cases)('%s → %s', async (path, detail) => {
    const r = await call(path, (await svc.key('max')).key);
    expect(r.status).toBe(400);
    expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(r.body).toEqual({ ...problems.invalidParameter, detail });
  });
  it('accepts a since typed by hand in curl, with unencoded ":" and "+"', async () => {
    const k = (await svc.key('max')).key;
    expect((await call('/v1/news?since=2026-11-21T10:00:00Z', k)).status).toBe(200);
    expect((await call('/v1/news?since=2026-11-21T11:00:00+01:00', k)).status).toBe(200);
    expect((await call('/v1/news?since=2026-11-21T10%3A00%3A00.5%2B00%3A00', k)).status).toBe(200);
  });
});

describe('list: newest first, exclusive since on received_at, lookback clamp by tier', () => {
  const t0 = Date.parse('2026-11-21T12:00:00Z');
  // A day beyond the pro window, and a day beyond the starter window (inside the pro one).
  const beyondPro = (plans.pro.lookbackHours + 24) * H;
  const beyondStarter = (plans.starter.lookbackHours + 24) * H;
  beforeEach(async () => {
    expect(beyondStarter).toBeLessThan(plans.pro.lookbackHours * H);
    await svc.ingest([{ content: 'older than the pro window' }], t0 - beyondPro);
    await svc.ingest([{ content: 'older than the starter window', urgency: 'flash' }], t0 - beyondStarter);
    await svc.ingest(
      [
        {
          content: 'two hours old',
          urgency: 'breaking',
          tickers: [{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }],
        },
      ],
      t0 - 2 * H,
    );
    await svc.ingest([{ content: 'one hour old' }], t0 - H);
  });

  it('returns the newest first with count', async () => {
    const r = await call('/v1/news', (await svc.key('pro')).key);
    expect(r.status).toBe(200);
    expect(r.body.articles.map((a: any) => a.content)).toEqual([
      'one hour old',
      'two hours old',
      'older than the starter window',
    ]);
    expect(r.body.count).toBe(3);
  });
  it(`clamps starter to ${lookback(plans.starter.lookbackHours)} and pro to ${lookback(plans.pro.lookbackHours)}, silently`, async () => {
    const starter = await call('/v1/news?since=2026-01-01T00:00:00Z', (await svc.key('starter')).key);
    expect(starter.status).toBe(200);
    expect(starter.body.articles.map((a: any) => a.content)).toEqual(['one hour old', 'two hours old']);
    const pro = await call('/v1/news?since=2026-01-01T00:00:00Z', (await svc.key('pro')).key);
    expect(pro.body.count).toBe(3);
  });
  it(`clamps an expired key to ${lookback(plans.expired.lookbackHours)}`, async () => {
    const k = await svc.key('max');
    await svc.store.accounts.cancel(k.account_id, svc.clock.now);
    expect((await call('/v1/news', k.key)).body.count).toBe(2);
  });
  it('reads a leap second in since as the next second instead of dropping everything', async () => {
    const k = (await svc.key('max')).key;
    const r = await call('/v1/news?since=2026-11-20T23:59:60Z', k);
    expect(r.status).toBe(200);
    expect(r.body.articles.map((a: any) => a.content)).toEqual(['one hour old', 'two hours old']);
  });
  it('treats since as exclusive and compares it with received_at', async () => {
    const k = (await svc.key('max')).key;
    const all = (await call('/v1/news', k)).body.articles;
    const twoHours = all[1].received_at;
    const r = await call(`/v1/news?since=${twoHours}`, k);
    expect(r.body.articles.map((a: any) => a.content)).toEqual(['one hour old']);
    const justBefore = new Date(Date.parse(twoHours) - 1).toISOString();
    expect((await call(`/v1/news?since=${justBefore}`, k)).body.count).toBe(2);
  });
  it('filters by urgency and honours limit', async () => {
    const k = (await svc.key('max')).key;
    expect((await call('/v1/news?urgency=breaking', k)).body.articles.map((a: any) => a.content)).toEqual([
      'two hours old',
    ]);
    expect((await call('/v1/news?limit=1', k)).body.articles.map((a: any) => a.content)).toEqual(['one hour old']);
  });
  it('shows tickers to max keys only, and omits the key for starter and pro', async () => {
    const max = (await call('/v1/news', (await svc.key('max')).key)).body.articles;
    expect(max.every((a: any) => Array.isArray(a.tickers))).toBe(true);
    expect(max[1].tickers).toEqual([{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }]);
    for (const tier of ['pro', 'starter'] as const) {
      const arts = (await call('/v1/news', (await svc.key(tier)).key)).body.articles;
      expect(arts.length).toBeGreaterThan(0);
      expect(arts.every((a: any) => !('tickers' in a))).toBe(true);
    }
  });
  it('keeps sentiment and published_at present as null when unknown', async () => {
    const a = (await call('/v1/news?limit=1', (await svc.key('pro')).key)).body.articles[0];
    expect(a).toHaveProperty('sentiment', null);
    expect(a).toHaveProperty('published_at', null);
  });
  it(`returns ${LIST_LIMIT_DEFAULT} articles by default and at most ${limitBounds.max}`, async () => {
    await svc.ingest(
      Array.from({ length: limitBounds.max + 20 }, (_, i) => ({ content: `bulk ${i}` })),
      t0 - 30 * 60_000,
    );
    const k = (await svc.key('max')).key;
    expect((await call('/v1/news', k)).body.count).toBe(LIST_LIMIT_DEFAULT);
    expect((await call(`/v1/news?limit=${limitBounds.max}`, k)).body.count).toBe(limitBounds.max);
  });
});

describe('search: ranked over the whole archive, query echoed, tickers on every article', () => {
  beforeEach(async () => {
    await svc.ingest(
      [{ content: 'Old news about copper mining output' }],
      svc.clock.now - plans.max.lookbackHours * H - 23 * DAY,
    );
    await svc.ingest([
      { content: 'Fed raises interest rates again', tickers: [{ ticker: 'SPY', sentiment: 'neutral', relevance: 1 }] },
      { content: 'Apple unveils a new phone' },
    ]);
  });

  it('finds nothing before the worker has embedded the articles, then ranks them', async () => {
    const k = (await svc.key('max')).key;
    expect((await call('/v1/news/search?q=fed%20raises%20rates', k)).body.count).toBe(0);
    await svc.worker.drain();
    const r = await call('/v1/news/search?q=fed%20raises%20rates&limit=2', k);
    expect(r.status).toBe(200);
    expect(r.body.count).toBe(2);
    expect(r.body.articles[0].content).toBe('Fed raises interest rates again');
    expect(r.body.articles.every((a: any) => Array.isArray(a.tickers))).toBe(true);
  });
  it('searches beyond the lookback window', async () => {
    await svc.worker.drain();
    const r = await call('/v1/news/search?q=copper%20mining', (await svc.key('max')).key);
    expect(r.body.articles[0].content).toBe('Old news about copper mining output');
  });
  it('reads a form-encoded q (+ for space) as typed in curl', async () => {
    const r = await call('/v1/news/search?q=central+bank+tightening', (await svc.key('max')).key);
    expect(r.status).toBe(200);
    expect(r.body.query).toBe('central bank tightening');
  });
  it('echoes q unchanged, spaces and unicode included', async () => {
    const q = '  Fed + ECB: taux d’intérêt €  ';
    const r = await call(`/v1/news/search?q=${encodeURIComponent(q)}`, (await svc.key('max')).key);
    expect(r.body.query).toBe(q);
  });
  it('answers 503 with the spec text when the embedder fails, and the request still counts', async () => {
    svc.embedder.failing = true;
    const r = await call('/v1/news/search?q=fed', (await svc.key('max')).key);
    expectProblem(r, 'embeddingUnavailable');
    expect(r.headers['x-ratelimit-remaining']).toBe(String(plans.max.rateLimit - 1));
  });
});

describe('usage: tier, rate limit and period end, free of charge', () => {
  it('reports an active plan with its period end', async () => {
    const r = await call('/v1/account/usage', (await svc.key('pro')).key);
    expect(r.body).toEqual({ tier: 'pro', rate_limit: plans.pro.rateLimit, period_end: '2026-12-21T12:00:00Z' });
    expect(r.headers['x-ratelimit-limit']).toBeUndefined();
  });
  it(`reports expired for ${limits.graceWindowMs / DAY} days after cancellation, then free`, async () => {
    const k = await svc.key('max');
    await svc.store.accounts.cancel(k.account_id, svc.clock.now);
    expect((await call('/v1/account/usage', k.key)).body).toEqual({
      tier: 'expired',
      rate_limit: plans.expired.rateLimit,
      period_end: null,
    });
    expect((await call('/v1/news', k.key)).headers['x-ratelimit-limit']).toBe(String(plans.expired.rateLimit));
    svc.clock.advance(limits.graceWindowMs - 1);
    expect((await call('/v1/account/usage', k.key)).body.tier).toBe('expired');
    svc.clock.advance(1);
    expect((await call('/v1/account/usage', k.key)).body).toEqual({
      tier: 'free',
      rate_limit: plans.free.rateLimit,
      period_end: null,
    });
    expectProblem(await call('/v1/news', k.key), 'inactiveApiKey');
  });
});

describe(`IP guard: ${GUARD.distinctKeys} different keys from one IP within ${GUARD.windowMs / 1000} s block it for ${GUARD.blockMs / 60_000} minutes`, () => {
  it(`refuses the request that brings the count to ${GUARD.distinctKeys}, then everything from that IP`, async () => {
    const from = ip();
    const keys = [];
    for (let i = 0; i < GUARD.distinctKeys; i++) keys.push(await svc.key('max'));
    const a = keys[0]!;
    const last = keys[keys.length - 1]!;
    for (const k of keys.slice(0, -1)) expect((await call('/v1/news', k.key, from)).status).toBe(200);
    const refused = await call('/v1/news', last.key, from);
    expectProblem(refused, 'inactiveApiKey');
    expect(refused.headers['retry-after']).toBe(String(GUARD.blockMs / 1000));
    svc.clock.advance(60_000);
    const later = await call('/v1/account/usage', a.key, from);
    expectProblem(later, 'inactiveApiKey');
    expect(later.headers['retry-after']).toBe(String(GUARD.blockMs / 1000 - 60));
    expect((await call('/v1/news', last.key, ip())).status).toBe(200);
    svc.clock.advance(GUARD.blockMs - 60_000 - 1);
    expectProblem(await call('/v1/account/usage', a.key, from), 'inactiveApiKey');
    svc.clock.advance(1);
    expect((await call('/v1/account/usage', a.key, from)).status).toBe(200);
  });
  it(`counts invalid keys too, and forgets keys older than ${GUARD.windowMs / 1000} s`, async () => {
    const from = ip();
    const a = await svc.key('pro');
    expect((await call('/v1/news', 'fns_live_guess1', from)).status).toBe(401);
    svc.clock.advance(GUARD.windowMs + 1000);
    // guess1 is forgotten: distinctKeys - 1 more keys (invalid ones and a valid one) are still let through.
    for (let i = 2; i < GUARD.distinctKeys; i++)
      expect((await call('/v1/news', `fns_live_guess${i}`, from)).status).toBe(401);
    expect((await call('/v1/news', a.key, from)).status).toBe(200);
    expectProblem(await call('/v1/news', `fns_live_guess${GUARD.distinctKeys}`, from), 'inactiveApiKey');
  });
  it('does not count the same key twice', async () => {
    const from = ip();
    const keys = [];
    for (let i = 1; i < GUARD.distinctKeys; i++) keys.push(await svc.key('pro'));
    for (let i = 0; i < GUARD.distinctKeys; i++) {
      for (const k of keys) expect((await call('/v1/account/usage', k.key, from)).status).toBe(200);
    }
  });
});

describe('outside the contract', () => {
  it('answers an unknown path with a 404 problem and another method with 405', async () => {
    const k = (await svc.key('max')).key;
    const r = await call('/v1/nope', k);
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toMatch(/problem\+json/);
    const post = await new Promise<number>((resolve) => {
      import('node:http').then(({ request }) => {
        const req = request(
          { host: '127.0.0.1', port: svc.port, path: '/v1/news', method: 'POST', headers: { 'X-API-Key': k } },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.end();
      });
    });
    expect(post).toBe(405);
  });
});
