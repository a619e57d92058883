/**
 * What only the mock does (docs/mock.md): the `Prefer` header to reach the other documented responses,
 * the extra sandbox tiers (`expired`, `free`), the firehose pace, one stream per sandbox key, and a
 * clean shutdown of the Prism child.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plans, problems, stream as streamRules } from '../../src/contract/index.js';
import { startMock, type RunningMock } from '../../src/mock/index.js';
import { loopbackFetch, nextLoopbackAddress } from './loopback-fetch.js';
import { opened, useStreamClients } from './stream-client.js';
import { clientOf } from './targets.js';

const INTERVAL_MS = 150;
let mock: RunningMock;
const connect = useStreamClients(() => mock.url);

beforeAll(async () => {
  mock = await startMock({ port: 0, streamIntervalMs: INTERVAL_MS, validateResponses: true });
}, 60_000);
afterAll(async () => {
  await mock?.close();
}, 30_000);

const media = (r: Response) => r.headers.get('content-type');

describe('Prefer reaches the other documented responses', () => {
  it('code=429: the rate-limit problem with Retry-After and X-RateLimit-Remaining 0', async () => {
    const { error, response } = await clientOf({ baseUrl: mock.url }, mock.keys.pro).GET('/v1/news', { headers: { Prefer: 'code=429' } });
    expect(response.status).toBe(429);
    expect(media(response)).toBe('application/problem+json');
    expect(error).toEqual(problems.rateLimitExceeded);
    expect(response.headers.get('x-ratelimit-limit')).toBe(String(plans.pro.rateLimit));
    expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
    const retry = Number(response.headers.get('retry-after'));
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
  });

  it('code=503 on search: the embedding problem, counted', async () => {
    const { error, response } = await clientOf({ baseUrl: mock.url }, mock.keys.max).GET('/v1/news/search', {
      params: { query: { q: 'fed' } },
      headers: { Prefer: 'code=503' },
    });
    expect(response.status).toBe(503);
    expect(error).toEqual(problems.embeddingUnavailable);
    expect(response.headers.get('x-ratelimit-limit')).toBe(String(plans.max.rateLimit));
  });

  it('code=401: the key problem, without rate-limit headers (refusals do not count)', async () => {
    const { error, response } = await clientOf({ baseUrl: mock.url }, mock.keys.max).GET('/v1/news', { headers: { Prefer: 'code=401' } });
    expect(response.status).toBe(401);
    expect(error).toEqual(problems.invalidApiKey);
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('code=403 on search: the Max-plan text, or with example=inactiveApiKey the inactive-key text; not counted', async () => {
    const client = clientOf({ baseUrl: mock.url }, mock.keys.max);
    const plain = await client.GET('/v1/news/search', { params: { query: { q: 'fed' } }, headers: { Prefer: 'code=403' } });
    expect(plain.response.status).toBe(403);
    expect(plain.error).toEqual(problems.maxPlanOnly);
    expect(plain.response.headers.get('x-ratelimit-limit')).toBeNull();
    const inactive = await client.GET('/v1/news/search', { params: { query: { q: 'fed' } }, headers: { Prefer: 'code=403, example=inactiveApiKey' } });
    expect(inactive.error).toEqual(problems.inactiveApiKey);
  });

  it('example=empty on list and example=noResults on search: empty results, q still echoed', async () => {
    const client = clientOf({ baseUrl: mock.url }, mock.keys.max);
    const list = await client.GET('/v1/news', { headers: { Prefer: 'example=empty' } });
    expect(list.data).toEqual({ count: 0, articles: [] });
    const search = await client.GET('/v1/news/search', { params: { query: { q: 'my own query' } }, headers: { Prefer: 'example=noResults' } });
    expect(search.data).toEqual({ count: 0, query: 'my own query', articles: [] });
  });

  it('a status the contract does not document: Prism says so in a problem', async () => {
    const { response, error } = await clientOf({ baseUrl: mock.url }, mock.keys.max).GET('/v1/news', { headers: { Prefer: 'code=418' } });
    expect(response.status).toBe(404);
    expect(media(response)).toBe('application/problem+json');
    expect((error as { detail: string }).detail).toMatch(/418/);
  });

  it('without Prefer, the key still decides: a pro key never sees tickers, even from the max example', async () => {
    const { data } = await clientOf({ baseUrl: mock.url }, mock.keys.pro).GET('/v1/news', { headers: { Prefer: 'example=maxKey' } });
    expect(data!.count).toBeGreaterThan(0);
    expect(data!.articles.every((a) => !('tickers' in a))).toBe(true);
  });
});

describe('the extra sandbox keys', () => {
  it('fns_test_expired: 1 req/min, lists without tickers, no search, no stream, usage expired', async () => {
    const client = clientOf({ baseUrl: mock.url }, mock.keys.expired);
    expect((await client.GET('/v1/account/usage')).data).toEqual({ tier: 'expired', rate_limit: 1, period_end: null });
    const list = await client.GET('/v1/news');
    expect(list.response.status).toBe(200);
    expect(list.response.headers.get('x-ratelimit-limit')).toBe('1');
    expect(list.data!.articles.every((a) => !('tickers' in a))).toBe(true);
    expect((await client.GET('/v1/news/search', { params: { query: { q: 'fed' } } })).error).toEqual(problems.maxPlanOnly);
    expect(await connect({ key: mock.keys.expired }).closed).toEqual(streamRules.closeCodes.planRequired);
  });

  it('fns_test_free: blocked with 403 API key is inactive, usage still answers', async () => {
    const client = clientOf({ baseUrl: mock.url }, mock.keys.free);
    for (const r of [await client.GET('/v1/news'), await client.GET('/v1/news/search', { params: { query: { q: 'fed' } } })]) {
      expect(r.response.status).toBe(403);
      expect(r.error).toEqual(problems.inactiveApiKey);
    }
    expect((await client.GET('/v1/account/usage')).data).toEqual({ tier: 'free', rate_limit: 0, period_end: null });
    expect(await connect({ key: mock.keys.free }).closed).toEqual(streamRules.closeCodes.inactiveKey);
  });

  it('no other fns_test_ key works', async () => {
    for (const key of ['fns_test_enterprise', 'fns_test_MAX', 'fns_test_', 'fns_live_max']) {
      const { error, response } = await clientOf({ baseUrl: mock.url }, key).GET('/v1/account/usage');
      expect(response.status).toBe(401);
      expect(error).toEqual(problems.invalidApiKey);
    }
  });

  it('the start-up banner keys are the sandbox keys', () => {
    expect(mock.keys).toEqual({ starter: 'fns_test_starter', pro: 'fns_test_pro', max: 'fns_test_max', expired: 'fns_test_expired', free: 'fns_test_free' });
  });
});

describe('the firehose', () => {
  it('pushes at the configured pace, each article with a fresh id and a current received_at', async () => {
    const c = connect({ key: mock.keys.max });
    await opened(c);
    const got = (await c.take(3, 5000)) as { id: string; received_at: string }[];
    expect(new Set(got.map((a) => a.id)).size).toBe(3);
    expect(got.map((a) => a.id)).toEqual(got.map((a) => a.id).sort());
    for (const a of got) expect(Math.abs(Date.parse(a.received_at) - Date.now())).toBeLessThan(5000);
    // One article per interval (server-side times: robust to a busy test process).
    const times = got.map((a) => Date.parse(a.received_at));
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(INTERVAL_MS * 0.9);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(INTERVAL_MS * 0.9);
  });

  it('refuses a second connection of the same key with 1008; the first keeps receiving', async () => {
    const first = connect({ key: mock.keys.pro });
    await opened(first);
    await first.take(1);
    const second = connect({ key: mock.keys.pro });
    expect(await second.closed).toEqual(streamRules.closeCodes.secondConnection);
    const n = first.messages.length;
    await first.take(n + 1);
  });

  it('survives a client that sends an oversized frame while being refused', async () => {
    const WebSocket = (await import('ws')).default;
    const ws = new WebSocket(`${mock.url.replace('http', 'ws')}/v1/stream?api_key=${mock.keys.free}`);
    ws.on('error', () => {});
    await new Promise((r) => ws.once('open', r));
    ws.send('x'.repeat(70 * 1024));
    await new Promise((r) => ws.once('close', r));
    const usage = await clientOf({ baseUrl: mock.url }, mock.keys.max).GET('/v1/account/usage');
    expect(usage.response.status).toBe(200);
  });
  it('answers an upgrade on another path with 404', async () => {
    const c = connect({ key: mock.keys.max }, `${mock.url}/x`);
    expect((await c.closed).code).toBe(-404);
  });

  it('closes open streams with 1001 when the mock stops', async () => {
    const other = await startMock({ port: 0, streamIntervalMs: INTERVAL_MS });
    const c = connect({ key: other.keys.max }, other.url);
    await opened(c);
    await other.close();
    expect(await c.closed).toEqual(streamRules.closeCodes.shuttingDown);
  }, 60_000);
});

describe('process hygiene', () => {
  it('stops the Prism child and frees the port on close', async () => {
    const other = await startMock({ port: 0 });
    const { pid } = other.prism;
    expect(() => process.kill(pid, 0)).not.toThrow();
    await other.close();
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    await expect(loopbackFetch(nextLoopbackAddress())(`${other.url}/v1/account/usage`)).rejects.toThrow();
    await expect(fetch(`${other.prism.url}/v1/account/usage`)).rejects.toThrow();
  }, 60_000);
});
