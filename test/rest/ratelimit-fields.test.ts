/**
 * The standard rate-limit fields (draft-ietf-httpapi-ratelimit-headers) beside X-RateLimit-*: present
 * exactly where X-RateLimit-* are (counted 200 and 400, 429, search's counted 503), written as the draft
 * writes them, read back with the typed client's parser, and agreeing with X-RateLimit-* and Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRateLimit, parseRateLimitPolicy } from '../../clients/typescript/src/ratelimit.js';
import { limits, plans } from '../../src/contract/index.js';
import { rateLimitField, rateLimitPolicyField, sfString } from '../../src/http/ratelimit-headers.js';
import { get, startTestService, type Reply, type TestService } from '../support/service.js';

const WINDOW_S = limits.rateWindowMs / 1000;
const header = (r: Reply, name: string) => r.headers[name] as string | undefined;

/** The standard fields of a reply, parsed, checked against its X-RateLimit-* (and Retry-After on 429). */
function expectAgreement(r: Reply, tier: string, now: number) {
  expect(header(r, 'ratelimit-policy')).toBe(`"${tier}";q=${header(r, 'x-ratelimit-limit')};w=${WINDOW_S}`);
  const policy = parseRateLimitPolicy(header(r, 'ratelimit-policy')!);
  const current = parseRateLimit(header(r, 'ratelimit')!);
  expect(policy).toEqual([{ policy: tier, quota: Number(header(r, 'x-ratelimit-limit')), windowSeconds: WINDOW_S }]);
  expect(current).toHaveLength(1);
  const [limit] = current!;
  expect(limit!.policy).toBe(tier);
  expect(limit!.remaining).toBe(Number(header(r, 'x-ratelimit-remaining')));
  // t: the delay form of X-RateLimit-Reset (both round up: they may differ by one second).
  const reset = Number(header(r, 'x-ratelimit-reset'));
  expect(limit!.resetSeconds).toBeGreaterThanOrEqual(0);
  expect(Math.abs(now / 1000 + limit!.resetSeconds! - reset)).toBeLessThanOrEqual(1);
  if (r.status === 429) expect(limit!.resetSeconds).toBe(Number(header(r, 'retry-after')));
  return limit!;
}

function expectNone(r: Reply) {
  for (const h of ['x-ratelimit-limit', 'ratelimit', 'ratelimit-policy']) expect(r.headers[h], h).toBeUndefined();
}

describe('the formatter writes the draft form', () => {
  it('policy and limit items', () => {
    expect(rateLimitPolicyField('default', 100, 10)).toBe('"default";q=100;w=10');
    expect(rateLimitField('default', 50, 30)).toBe('"default";r=50;t=30');
    expect(rateLimitField('max', 0, -3)).toBe('"max";r=0;t=0');
  });

  it('escapes a String and refuses what a String cannot hold or an Integer too large', () => {
    expect(sfString('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(parseRateLimit(rateLimitField('a"b\\c', 1, 2))).toEqual([
      { policy: 'a"b\\c', remaining: 1, resetSeconds: 2 },
    ]);
    expect(() => sfString('café')).toThrow(RangeError);
    expect(() => rateLimitField('x', 1e16, 1)).toThrow(RangeError);
    expect(() => rateLimitField('x', 1.5, 1)).toThrow(RangeError);
  });
});

describe('the service', () => {
  // One client address per test: the IP guard blocks an address that shows 3 keys within a minute.
  let address = 10;
  const nextIp = () => `127.0.0.${address++}`;
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  it('a counted list: "max";q=60;w=60 and r/t agreeing with X-RateLimit-*, as the window slides', async () => {
    const ip = nextIp();
    const { key } = await svc.key('max');
    const first = await get(svc.port, '/v1/news', { key, ip });
    expect(first.status).toBe(200);
    expect(header(first, 'ratelimit-policy')).toBe(`"max";q=${plans.max.rateLimit};w=60`);
    expect(header(first, 'ratelimit')).toBe(`"max";r=${plans.max.rateLimit - 1};t=60`);
    expectAgreement(first, 'max', svc.clock.now);
    svc.clock.advance(17_500);
    const second = await get(svc.port, '/v1/news', { key, ip });
    // The oldest counted request leaves the window 42.5 s from now: t rounds up.
    expect(header(second, 'ratelimit')).toBe(`"max";r=${plans.max.rateLimit - 2};t=43`);
    expectAgreement(second, 'max', svc.clock.now);
  });

  it('a counted 400 and a counted search carry them; usage, 401 and 403 do not', async () => {
    const ip = nextIp();
    const { key } = await svc.key('max');
    const bad = await get(svc.port, '/v1/news?limit=0', { key, ip });
    expect(bad.status).toBe(400);
    expectAgreement(bad, 'max', svc.clock.now);
    const search = await get(svc.port, '/v1/news/search?q=rates', { key, ip });
    expect(search.status).toBe(200);
    expectAgreement(search, 'max', svc.clock.now);
    expectNone(await get(svc.port, '/v1/account/usage', { key, ip }));
    expectNone(await get(svc.port, '/v1/news', { key: 'fns_live_nope', ip: nextIp() }));
    const pro = await svc.key('pro');
    expectNone(await get(svc.port, '/v1/news/search?q=rates', { key: pro.key, ip: nextIp() }));
  });

  it('a 429: r=0, t = Retry-After, the policy unchanged', async () => {
    const ip = nextIp();
    const { key } = await svc.key('starter');
    const admitted = await get(svc.port, '/v1/news', { key, ip });
    expect(header(admitted, 'ratelimit')).toBe('"starter";r=0;t=60');
    svc.clock.advance(12_400);
    const refused = await get(svc.port, '/v1/news', { key, ip });
    expect(refused.status).toBe(429);
    expect(header(refused, 'retry-after')).toBe('48');
    expect(header(refused, 'ratelimit-policy')).toBe('"starter";q=1;w=60');
    expect(header(refused, 'ratelimit')).toBe('"starter";r=0;t=48');
    expectAgreement(refused, 'starter', svc.clock.now);
  });

  it("search's counted 503 (embedding outage) carries them", async () => {
    const ip = nextIp();
    const { key } = await svc.key('max');
    svc.embedder.failing = true;
    try {
      // A query not embedded before (query vectors are cached).
      const r = await get(svc.port, '/v1/news/search?q=bond+yields+outage', { key, ip });
      expect(r.status).toBe(503);
      expectAgreement(r, 'max', svc.clock.now);
    } finally {
      svc.embedder.failing = false;
    }
  });
});
