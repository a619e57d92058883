/**
 * Parity: ONE client suite, written with the typed client generated from openapi.yaml (openapi-fetch)
 * and a plain `ws` client, run unchanged against the partner mock (sandbox keys) and the real service
 * (live keys). Every behaviour docs/mock.md says the mock reproduces is checked here on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  limitBounds,
  limits,
  openapiDocument,
  operationParameters,
  plans,
  problems,
  stream as streamRules,
  type Problem,
} from '../../src/contract/index.js';
import { createResponseCheck } from '../../src/http/response-check.js';
import { openapiAjv } from '../support/specs.js';
import { loopbackFetch, nextLoopbackAddress } from './loopback-fetch.js';
import { opened, useStreamClients, type StreamClient } from './stream-client.js';
import { clientOf, startMockTarget, startRealTarget, type PaidTier, type ParityTarget } from './targets.js';

const contract = createResponseCheck();
const ajv = openapiAjv(openapiDocument());
const validateArticle = ajv.getSchema('openapi#/components/schemas/Article')!;
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
// Limits and rules in the expected bodies come from the contract, not written out.
const WINDOW_S = limits.rateWindowMs / 1000;
const LIMIT_DEFAULT = operationParameters('listNews').find((p) => p.name === 'limit')!.schema.default as number;
const LIMIT_RULE = `limit must be an integer between ${limitBounds.min} and ${limitBounds.max}`;
const Q = operationParameters('searchNews').find((p) => p.name === 'q')!.schema;
const Q_RULE = `a string of ${Q.minLength} to ${Q.maxLength} characters, not only spaces`;

/** The bare media type, e.g. `application/problem+json`. */
const mediaType = (r: Response) => r.headers.get('content-type');

/** Throws when the status, media type and body are not what the contract documents for the operation. */
function expectContract(operationId: string, response: Response, body: unknown) {
  expect(() =>
    contract(operationId, response.status, (mediaType(response) ?? '').split(';')[0]!.trim(), body),
  ).not.toThrow();
}

function expectProblem(response: Response, body: unknown, expected: Problem) {
  expect(response.status).toBe(expected.status);
  expect(mediaType(response)).toBe('application/problem+json');
  expect(body).toEqual(expected);
}

/** The rate-limit headers of the first counted request of a fresh key of `tier`. */
function expectFirstCountedRequest(response: Response, tier: PaidTier, before: number) {
  const limit = plans[tier].rateLimit;
  expect(response.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(response.headers.get('x-ratelimit-remaining')).toBe(String(limit - 1));
  const reset = Number(response.headers.get('x-ratelimit-reset'));
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(Math.floor(before / 1000) + WINDOW_S);
  expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + WINDOW_S);
}

function expectNotCounted(response: Response) {
  for (const h of RATE_HEADERS) expect(response.headers.get(h)).toBeNull();
}

const targets: { name: string; start: () => Promise<ParityTarget> }[] = [
  { name: 'mock', start: startMockTarget },
  { name: 'real service', start: startRealTarget },
];

describe.each(targets)('$name', ({ start }) => {
  let t: ParityTarget;
  beforeAll(async () => {
    t = await start();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 30_000);

  describe('GET /v1/news', () => {
    it.each(['starter', 'pro', 'max'] as const)(
      'answers 200 to a %s key, tickers on every article for max only, with rate-limit headers',
      async (tier) => {
        const before = Date.now();
        const { data, response } = await clientOf(t, await t.newKey(tier)).GET('/v1/news');
        expect(response.status).toBe(200);
        expect(mediaType(response)).toBe('application/json');
        expectContract('listNews', response, data);
        expect(data!.articles.length).toBeGreaterThan(0);
        expect(data!.count).toBe(data!.articles.length);
        if (plans[tier].tickers) expect(data!.articles.every((a) => Array.isArray(a.tickers))).toBe(true);
        else expect(data!.articles.every((a) => !('tickers' in a))).toBe(true);
        expectFirstCountedRequest(response, tier, before);
      },
    );

    it('lists newest first, honours limit and urgency', async () => {
      const client = clientOf(t, await t.newKey('max'));
      const all = (await client.GET('/v1/news')).data!;
      expect(all.articles.length).toBeGreaterThanOrEqual(2);
      const ids = all.articles.map((a) => a.id);
      expect(ids).toEqual([...ids].sort().reverse());
      const one = await client.GET('/v1/news', { params: { query: { limit: 1 } } });
      expect(one.data!.count).toBe(1);
      expect(one.data!.articles[0]!.id).toBe(ids[0]);
      const breaking = await client.GET('/v1/news', { params: { query: { urgency: 'breaking' } } });
      expect(breaking.data!.count).toBeGreaterThan(0);
      expect(breaking.data!.articles.every((a) => a.urgency === 'breaking')).toBe(true);
      expect(breaking.data!.count).toBeLessThan(all.count);
    });

    it('treats since as exclusive, compared with received_at', async () => {
      const client = clientOf(t, await t.newKey('max'));
      const all = (await client.GET('/v1/news')).data!.articles;
      const oldest = all[all.length - 1]!;
      const newer = all.filter((a) => Date.parse(a.received_at) > Date.parse(oldest.received_at));
      expect(newer.length).toBeGreaterThan(0);
      const after = await client.GET('/v1/news', { params: { query: { since: oldest.received_at } } });
      expect(after.response.status).toBe(200);
      expect(after.data!.articles.map((a) => a.id)).toEqual(newer.map((a) => a.id));
      const justBefore = new Date(Date.parse(oldest.received_at) - 1).toISOString();
      expect((await client.GET('/v1/news', { params: { query: { since: justBefore } } })).data!.count).toBe(all.length);
    });

    it('follows `after` oldest first with next and a matching Link header, then polls next', async () => {
      const client = clientOf(t, await t.newKey('max'));
      const all = (await client.GET('/v1/news')).data!.articles;
      const oldest = all[all.length - 1]!;
      const first = await client.GET('/v1/news', { params: { query: { after: oldest.id, limit: 1 } } });
      expectContract('listNews', first.response, first.data);
      expect(first.data!.articles.map((a) => a.id)).toEqual([all[all.length - 2]!.id]);
      expect(first.data!.next).toBe(`/v1/news?limit=1&after=${all[all.length - 2]!.id}`);
      expect(first.response.headers.get('link')).toBe(`<${first.data!.next}>; rel="next"`);
      const rest = await client.GET('/v1/news', { params: { query: { after: oldest.id } } });
      expect(rest.data!.articles.map((a) => a.id)).toEqual(
        all
          .slice(0, -1)
          .map((a) => a.id)
          .reverse(),
      );
      // At the end: nothing newer, and `next` is the same page to poll later.
      const newest = all[0]!.id;
      const end = await client.GET('/v1/news', { params: { query: { after: newest } } });
      expect(end.data).toEqual({ count: 0, articles: [], next: `/v1/news?limit=${LIMIT_DEFAULT}&after=${newest}` });
    });

    it('pages backwards with next (before) and ends with next null, no Link header', async () => {
      const client = clientOf(t, await t.newKey('max'));
      const all = (await client.GET('/v1/news')).data!.articles;
      const first = await client.GET('/v1/news', { params: { query: { limit: 1 } } });
      expect(first.data!.next).toBe(`/v1/news?limit=1&before=${all[0]!.id}`);
      const second = await client.GET('/v1/news', { params: { query: { limit: 1, before: all[0]!.id } } });
      expect(second.data!.articles.map((a) => a.id)).toEqual([all[1]!.id]);
      const last = await client.GET('/v1/news', { params: { query: { before: all[all.length - 1]!.id } } });
      expect(last.data).toEqual({ count: 0, articles: [], next: null });
      expect(last.response.headers.get('link')).toBeNull();
    });

    it('refuses after with before: 400 with the contract text, counted', async () => {
      const client = clientOf(t, await t.newKey('max'));
      const id = (await client.GET('/v1/news')).data!.articles[0]!.id;
      const { error, response } = await client.GET('/v1/news', { params: { query: { after: id, before: id } } });
      expectProblem(response, error, problems.cursorConflict);
      expectContract('listNews', response, error);
      expect(response.headers.get('x-ratelimit-limit')).toBe(String(plans.max.rateLimit));
    });

    it.each(['starter', 'pro'] as const)(
      'answers tickers from a %s key with 403 and the ticker text, not counted',
      async (tier) => {
        const { error, response } = await clientOf(t, await t.newKey(tier)).GET('/v1/news', {
          params: { query: { tickers: ['AAPL'] } },
        });
        expectProblem(response, error, problems.tickerFilterMaxPlanOnly);
        expectContract('listNews', response, error);
        expectNotCounted(response);
      },
    );
  });

  describe('GET /v1/news/search', () => {
    it('answers 200 to a max key: query echoed unchanged, tickers on every article, rate-limit headers', async () => {
      const q = '  Fed + ECB: taux d’intérêt €  ';
      const before = Date.now();
      const { data, response } = await clientOf(t, await t.newKey('max')).GET('/v1/news/search', {
        params: { query: { q, limit: 5 } },
      });
      expect(response.status).toBe(200);
      expect(mediaType(response)).toBe('application/json');
      expectContract('searchNews', response, data);
      expect(data!.query).toBe(q);
      expect(data!.articles.length).toBeGreaterThan(0);
      expect(data!.articles.length).toBeLessThanOrEqual(5);
      expect(data!.count).toBe(data!.articles.length);
      expect(data!.articles.every((a) => Array.isArray(a.tickers))).toBe(true);
      expectFirstCountedRequest(response, 'max', before);
    });

    it('honours limit', async () => {
      const { data } = await clientOf(t, await t.newKey('max')).GET('/v1/news/search', {
        params: { query: { q: 'Fed raises interest rates', limit: 1 } },
      });
      expect(data!.count).toBe(1);
      expect(data!.articles).toHaveLength(1);
    });

    it.each(['starter', 'pro'] as const)(
      'answers 403 with the Max-plan text to a %s key, not counted',
      async (tier) => {
        const { error, response } = await clientOf(t, await t.newKey(tier)).GET('/v1/news/search', {
          params: { query: { q: 'Fed raises interest rates' } },
        });
        expectProblem(response, error, problems.maxPlanOnly);
        expectContract('searchNews', response, error);
        expectNotCounted(response);
      },
    );
  });

  describe('authentication', () => {
    const calls = {
      list: (c: ReturnType<typeof clientOf>) => c.GET('/v1/news'),
      search: (c: ReturnType<typeof clientOf>) =>
        c.GET('/v1/news/search', { params: { query: { q: 'Fed raises interest rates' } } }),
      usage: (c: ReturnType<typeof clientOf>) => c.GET('/v1/account/usage'),
    };
    it.each(Object.keys(calls) as (keyof typeof calls)[])(
      '%s: 401 Invalid API key for a missing, an unknown and an other-environment key',
      async (op) => {
        for (const key of [undefined, t.unknownKey, t.foreignKey]) {
          const { error, response } = await calls[op](clientOf(t, key));
          expectProblem(response, error, problems.invalidApiKey);
          expectNotCounted(response);
        }
      },
    );

    it(`checks the key before the parameters: an unknown key with limit=${limitBounds.min - 1} is 401, not 400`, async () => {
      const { error, response } = await clientOf(t, t.unknownKey).GET('/v1/news', {
        params: { query: { limit: limitBounds.min - 1 } },
      });
      expectProblem(response, error, problems.invalidApiKey);
    });
  });

  describe('validation: the same 400 problem for the same bad request', () => {
    type Case = [
      string,
      (c: ReturnType<typeof clientOf>) => Promise<{ error?: unknown; response: Response }>,
      string,
      boolean,
    ];
    const cases: Case[] = [
      [
        `limit=${limitBounds.min - 1}`,
        (c) => c.GET('/v1/news', { params: { query: { limit: limitBounds.min - 1 } } }),
        LIMIT_RULE,
        true,
      ],
      [
        `limit=${limitBounds.max + 1}`,
        (c) => c.GET('/v1/news', { params: { query: { limit: limitBounds.max + 1 } } }),
        LIMIT_RULE,
        true,
      ],
      [
        'limit given twice',
        (c) => c.GET('/v1/news', { params: { query: { limit: [1, 2] as unknown as number } } }),
        'limit must be given once',
        true,
      ],
      [
        'urgency=urgent',
        (c) => c.GET('/v1/news', { params: { query: { urgency: 'urgent' as 'flash' } } }),
        'urgency must be one of breaking, flash, regular',
        true,
      ],
      [
        'since=yesterday',
        (c) => c.GET('/v1/news', { params: { query: { since: 'yesterday' } } }),
        'since must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
        true,
      ],
      [
        'since without an offset',
        (c) => c.GET('/v1/news', { params: { query: { since: '2026-11-21T10:00:00' } } }),
        'since must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
        true,
      ],
      [
        'unknown parameter page=2',
        (c) => c.GET('/v1/news', { params: { query: { page: 2 } as never } }),
        'page is not a parameter of this operation',
        true,
      ],
      [
        'search without q',
        (c) => c.GET('/v1/news/search', { params: { query: {} as never } }),
        `q is required and must be ${Q_RULE}`,
        true,
      ],
      [
        `q of ${Q.minLength - 1} character(s)`,
        (c) => c.GET('/v1/news/search', { params: { query: { q: 'a'.repeat(Q.minLength - 1) } } }),
        `q must be ${Q_RULE}`,
        true,
      ],
      [
        `search limit=${limitBounds.max * 5}`,
        (c) => c.GET('/v1/news/search', { params: { query: { q: 'fed', limit: limitBounds.max * 5 } } }),
        LIMIT_RULE,
        true,
      ],
      [
        'usage?verbose=1 (not counted)',
        (c) => c.GET('/v1/account/usage', { params: { query: { verbose: 1 } as never } }),
        'verbose is not a parameter of this operation',
        false,
      ],
    ];
    it.each(cases)('%s', async (_name, call, detail, counted) => {
      const { error, response } = await call(clientOf(t, await t.newKey('max')));
      expectProblem(response, error, { ...problems.invalidParameter, detail });
      if (counted) expectFirstCountedRequest(response, 'max', Date.now() - 5000);
      else expectNotCounted(response);
    });
  });

  describe('GET /v1/account/usage', () => {
    it.each(['starter', 'pro', 'max'] as const)(
      'reports the %s tier, its rate limit and a future period end; not counted',
      async (tier) => {
        const { data, response } = await clientOf(t, await t.newKey(tier)).GET('/v1/account/usage');
        expect(response.status).toBe(200);
        expect(mediaType(response)).toBe('application/json');
        expectContract('getAccountUsage', response, data);
        expect(data!.tier).toBe(tier);
        expect(data!.rate_limit).toBe(plans[tier].rateLimit);
        expect(Date.parse(data!.period_end!)).toBeGreaterThan(Date.now());
        expectNotCounted(response);
      },
    );
  });

  describe('outside the contract', () => {
    it('answers an unknown path with a 404 problem', async () => {
      const r = await loopbackFetch(nextLoopbackAddress())(`${t.baseUrl}/v1/nope`, {
        headers: { 'X-API-Key': t.keys.max },
      });
      expectProblem(r, await r.json(), {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: 'No endpoint at /v1/nope',
      });
    });
  });

  describe('WS /v1/stream', () => {
    const connect = useStreamClients(() => t.baseUrl);

    const receive = async (c: StreamClient, n: number) => {
      await opened(c);
      const got: unknown[] = [];
      while (got.length < n) {
        await t.arrive();
        got.push(...(await c.take(got.length + 1, 5000)).slice(got.length));
      }
      return got as Record<string, unknown>[];
    };

    it(`pushes articles to a max key, with tickers and fresh ULID ids`, async () => {
      const c = connect({ key: await t.newKey('max') });
      const got = await receive(c, 2);
      for (const a of got) {
        expect(validateArticle(a), ajv.errorsText(validateArticle.errors)).toBe(true);
        expect(Array.isArray(a.tickers)).toBe(true);
        expect(a.id).toMatch(ULID);
        expect(Math.abs(Date.parse(String(a.received_at)) - Date.now())).toBeLessThan(60_000);
      }
      expect(got[0]!.id).not.toBe(got[1]!.id);
    });

    it(`pushes articles to a pro key, without tickers`, async () => {
      const c = connect({ key: await t.newKey('pro') });
      const [a] = await receive(c, 1);
      expect(validateArticle(a), ajv.errorsText(validateArticle.errors)).toBe(true);
      expect(a).not.toHaveProperty('tickers');
    });

    it(`closes a starter key with 1008 and the contract's reason`, async () => {
      const c = connect({ key: await t.newKey('starter') });
      expect(await c.closed).toEqual(streamRules.closeCodes.planRequired);
      expect(c.messages).toEqual([]);
    });

    it(`closes an unknown key with 1008 and the contract's reason`, async () => {
      const c = connect({ key: t.unknownKey });
      expect(await c.closed).toEqual(streamRules.closeCodes.invalidKey);
      expect(c.messages).toEqual([]);
    });

    it(`accepts the key in the X-API-Key header of the upgrade`, async () => {
      const c = connect({ key: await t.newKey('pro'), header: true });
      const [a] = await receive(c, 1);
      expect(validateArticle(a)).toBe(true);
    });
  });
});
