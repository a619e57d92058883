/**
 * The typed client's reading of the standard rate-limit fields (clients/typescript/src/ratelimit.ts):
 * the RFC 9651 List parser on the draft's own examples (draft-ietf-httpapi-ratelimit-headers), malformed
 * values rejected, the client's wait on `429` from `RateLimit` when there is no `Retry-After`, and the
 * fields of the mock and the real service read back through the client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FnsClient } from '../../clients/typescript/src/index.js';
import type { RateLimit } from '../../clients/typescript/src/rest.js';
import {
  parseList,
  parseRateLimit,
  parseRateLimitPolicy,
  rateLimitWaitSeconds,
  SfToken,
} from '../../clients/typescript/src/ratelimit.js';
import { plans } from '../../src/contract/index.js';
import { loopbackFetch, nextLoopbackAddress } from '../parity/loopback-fetch.js';
import { startMockTarget, startRealTarget, type ParityTarget } from '../parity/targets.js';

describe('RateLimit-Policy, as the draft writes it', () => {
  it('one policy with a window', () => {
    expect(parseRateLimitPolicy('"default";q=100;w=10')).toEqual([
      { policy: 'default', quota: 100, windowSeconds: 10 },
    ]);
  });

  it('several policies in one list', () => {
    expect(parseRateLimitPolicy('"permin";q=50;w=60,"perhr";q=1000;w=3600')).toEqual([
      { policy: 'permin', quota: 50, windowSeconds: 60 },
      { policy: 'perhr', quota: 1000, windowSeconds: 3600 },
    ]);
    expect(parseRateLimitPolicy('"burst";q=100;w=60,"daily";q=1000;w=86400')?.map((p) => p.policy)).toEqual([
      'burst',
      'daily',
    ]);
  });

  it('a quota unit and a partition key (a byte sequence, ignored)', () => {
    expect(parseRateLimitPolicy('"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:')).toEqual([
      { policy: 'peruser', quota: 65535, windowSeconds: 10, unit: 'content-bytes' },
    ]);
    expect(parseRateLimitPolicy('"peruser";q=100;w=60;pk=:cHsdsRa894==:')).toEqual([
      { policy: 'peruser', quota: 100, windowSeconds: 60 },
    ]);
  });

  it('parameters in any order, unknown ones ignored, without a window', () => {
    expect(parseRateLimitPolicy('"default";w=10;acme-burst=5;q=100')).toEqual([
      { policy: 'default', quota: 100, windowSeconds: 10 },
    ]);
    expect(parseRateLimitPolicy('"default";q=7;comment="free text";flag')).toEqual([{ policy: 'default', quota: 7 }]);
  });

  it('rejects a field without a quota, with a zero or negative window, or a decimal quota', () => {
    for (const bad of [
      '"default";w=10',
      '"default";q=10;w=0',
      '"default";q=-1',
      '"default";q=1.5;w=10',
      '"default";q="100"',
      '"default";q=10;qu=requests',
    ]) {
      expect(parseRateLimitPolicy(bad), bad).toBeUndefined();
    }
  });
});

describe('RateLimit, as the draft writes it', () => {
  it('remaining and reset', () => {
    expect(parseRateLimit('"default";r=50;t=30')).toEqual([{ policy: 'default', remaining: 50, resetSeconds: 30 }]);
  });

  it('no reset, a partition key', () => {
    expect(parseRateLimit('"default";r=999;pk=:dHJpYWwxMjEzMjM=:')).toEqual([{ policy: 'default', remaining: 999 }]);
    expect(parseRateLimit('"default";r=300000000;t=60;pk=:QXBwLTk5OQ==:')).toEqual([
      { policy: 'default', remaining: 300_000_000, resetSeconds: 60 },
    ]);
  });

  it('parameters in any order, unknown ones ignored, several policies, field lines joined by fetch', () => {
    expect(parseRateLimit('"max";t=42;x-extra=?1;r=59')).toEqual([{ policy: 'max', remaining: 59, resetSeconds: 42 }]);
    expect(parseRateLimit('"burst";r=0;t=5 ,\t"daily";r=900;t=3600')).toEqual([
      { policy: 'burst', remaining: 0, resetSeconds: 5 },
      { policy: 'daily', remaining: 900, resetSeconds: 3600 },
    ]);
    expect(parseRateLimit('"burst";r=0;t=5, "daily";r=900;t=3600')).toHaveLength(2);
  });

  it('accepts a token as the policy name (the String/Token question the working group discussed)', () => {
    expect(parseRateLimit('default;r=1;t=7')).toEqual([{ policy: 'default', remaining: 1, resetSeconds: 7 }]);
  });

  it('a later duplicate parameter wins (RFC 9651)', () => {
    expect(parseRateLimit('"default";r=5;r=3')).toEqual([{ policy: 'default', remaining: 3 }]);
  });

  it.each([
    ['empty', ''],
    ['no remaining', '"default";t=30'],
    ['a negative remaining', '"default";r=-1;t=30'],
    ['a negative reset', '"default";r=1;t=-30'],
    ['a decimal reset', '"default";r=1;t=1.5'],
    ['a string remaining', '"default";r="50";t=30'],
    ['an integer as the name', '5;r=1'],
    ['an inner list', '("a" "b");r=1'],
    ['an unterminated string', '"default;r=50'],
    ['an invalid escape', '"de\\fault";r=50'],
    ['a trailing comma', '"default";r=50,'],
    ['two items without a comma', '"a";r=1 "b";r=2'],
    ['an uppercase key', '"default";R=50'],
    ['a space before "="', '"default";r =50'],
    ['a 16-digit integer', '"default";r=1234567890123456'],
    ['a non-ASCII character', '"défaut";r=50'],
  ])('rejects %s', (_what, value) => {
    expect(parseRateLimit(value)).toBeUndefined();
  });

  it('null (no field) is undefined', () => {
    expect(parseRateLimit(null)).toBeUndefined();
    expect(parseRateLimitPolicy(null)).toBeUndefined();
  });

  it('the wait is the longest reset among the exhausted policies', () => {
    expect(rateLimitWaitSeconds(parseRateLimit('"a";r=0;t=5, "b";r=0;t=50, "c";r=9;t=500'))).toBe(50);
    expect(rateLimitWaitSeconds(parseRateLimit('"default";r=1;t=7'))).toBeUndefined();
    expect(rateLimitWaitSeconds(parseRateLimit('"default";r=0'))).toBeUndefined();
  });
});

describe('the Structured Field List parser', () => {
  it('reads every bare item type with parameters', () => {
    const [a, b, c, d, e, f] = parseList('1;a, -2.5;b=?0, "s\\"q", tok/en:x, :aGk=:, ?1;*k=%"caf%c3%a9"');
    expect(a).toEqual({ value: 1, params: new Map([['a', true]]) });
    expect(b).toEqual({ value: -2.5, params: new Map([['b', false]]) });
    expect(c).toMatchObject({ value: 's"q' });
    expect((d as { value: SfToken }).value).toEqual(new SfToken('tok/en:x'));
    expect((e as { value: Uint8Array }).value).toEqual(new Uint8Array([104, 105]));
    expect(f).toMatchObject({ value: true, params: new Map([['*k', { text: 'café' }]]) });
  });

  it('reads inner lists', () => {
    expect(parseList('("a" 1);x=2, b')).toEqual([
      {
        items: [
          { value: 'a', params: new Map() },
          { value: 1, params: new Map() },
        ],
        params: new Map([['x', 2]]),
      },
      { value: new SfToken('b'), params: new Map() },
    ]);
  });

  it.each(['1.', '1.2345', '1234567890123.1', '?2', ':not base64!:', '"a" "b"', ',', 'a,,b', '%"caf%C3%A9"'])(
    'refuses %s',
    (value) => {
      expect(() => parseList(value)).toThrow();
    },
  );
});

describe('the client reads the standard fields', () => {
  const headers = (h: Record<string, string>) => ({ 'content-type': 'application/problem+json', ...h });
  const tooMany = (h: Record<string, string>) =>
    new Response(
      JSON.stringify({
        type: 'urn:fns:problem:rate-limit-exceeded',
        title: 'Too Many Requests',
        status: 429,
        detail: 'Rate limit exceeded. Try again shortly.',
      }),
      { status: 429, headers: headers(h) },
    );
  const ok = (h: Record<string, string> = {}) =>
    new Response(JSON.stringify({ tier: 'max', rate_limit: 60, period_end: null }), {
      status: 200,
      headers: { 'content-type': 'application/json', ...h },
    });

  it('waits the `t` of RateLimit on a 429 without Retry-After', async () => {
    const replies = [tooMany({ 'RateLimit-Policy': '"max";q=60;w=60', RateLimit: '"max";r=0;t=7' }), ok()];
    const waits: number[] = [];
    const fns = new FnsClient({
      baseUrl: 'http://fns.invalid',
      apiKey: 'k',
      fetch: async () => replies.shift()!,
      waitOnRateLimit: true,
      sleep: async (ms) => void waits.push(ms),
    });
    await fns.getAccountUsage();
    expect(waits).toEqual([7000]);
  });

  it('Retry-After takes precedence over RateLimit (the draft)', async () => {
    const replies = [tooMany({ 'Retry-After': '3', RateLimit: '"max";r=0;t=7' }), ok()];
    const waits: number[] = [];
    const fns = new FnsClient({
      baseUrl: 'http://fns.invalid',
      apiKey: 'k',
      fetch: async () => replies.shift()!,
      waitOnRateLimit: true,
      sleep: async (ms) => void waits.push(ms),
    });
    await fns.getAccountUsage();
    expect(waits).toEqual([3000]);
  });

  it('falls back to X-RateLimit-Reset when neither is there, and to X-RateLimit-* when RateLimit is malformed', async () => {
    const reset = Math.floor(Date.now() / 1000) + 4;
    const replies = [
      tooMany({
        'X-RateLimit-Limit': '60',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(reset),
        RateLimit: 'garbage;;',
      }),
      ok(),
    ];
    const waits: number[] = [];
    const seen: RateLimit[] = [];
    const fns = new FnsClient({
      baseUrl: 'http://fns.invalid',
      apiKey: 'k',
      fetch: async () => replies.shift()!,
      waitOnRateLimit: true,
      sleep: async (ms) => void waits.push(ms),
      onRateLimit: (r) => void seen.push(r),
    });
    await fns.getAccountUsage();
    expect(waits[0]).toBeGreaterThanOrEqual(3000);
    expect(waits[0]).toBeLessThanOrEqual(4000);
    expect(seen).toEqual([{ limit: 60, remaining: 0, reset }]);
  });

  it('onRateLimit reports the standard fields with the policy name', async () => {
    const seen: RateLimit[] = [];
    const fns = new FnsClient({
      baseUrl: 'http://fns.invalid',
      apiKey: 'k',
      fetch: async () => ok({ 'RateLimit-Policy': '"max";q=60;w=60', RateLimit: '"max";r=59;t=42' }),
      onRateLimit: (r) => void seen.push(r),
    });
    const before = Math.ceil(Date.now() / 1000);
    await fns.getAccountUsage();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ limit: 60, remaining: 59, policy: 'max' });
    expect(seen[0]!.reset - before).toBeGreaterThanOrEqual(42);
    expect(seen[0]!.reset - before).toBeLessThanOrEqual(43);
  });
});

describe.each([
  ['mock', startMockTarget],
  ['real service', startRealTarget],
] as const)('the %s sends fields the client reads', (name, start) => {
  let target: ParityTarget;
  beforeAll(async () => {
    target = await start();
  }, 60_000);
  afterAll(() => target?.close());

  it('a counted list: the policy is the tier, and the values agree with X-RateLimit-*', async () => {
    const seen: RateLimit[] = [];
    const fns = new FnsClient({
      baseUrl: target.baseUrl,
      apiKey: target.keys.pro,
      fetch: loopbackFetch(nextLoopbackAddress()),
      onRateLimit: (r) => void seen.push(r),
    });
    await fns.listNews({ limit: 1 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ policy: 'pro', limit: plans.pro.rateLimit, remaining: plans.pro.rateLimit - 1 });

    const response = await loopbackFetch(nextLoopbackAddress())(`${target.baseUrl}/v1/news?limit=1`, {
      headers: { 'X-API-Key': target.keys.max },
    });
    const policy = parseRateLimitPolicy(response.headers.get('ratelimit-policy'));
    const current = parseRateLimit(response.headers.get('ratelimit'));
    expect(policy).toEqual([
      { policy: 'max', quota: Number(response.headers.get('x-ratelimit-limit')), windowSeconds: 60 },
    ]);
    expect(current).toMatchObject([
      { policy: 'max', remaining: Number(response.headers.get('x-ratelimit-remaining')) },
    ]);
  });

  it.runIf(name === 'mock')(
    'Prefer answers: r=0 and t=Retry-After on a 429, no standard fields where X-RateLimit-* are removed',
    async () => {
      const get = (path: string, prefer: string) =>
        loopbackFetch(nextLoopbackAddress())(`${target.baseUrl}${path}`, {
          headers: { 'X-API-Key': target.keys.pro, Prefer: prefer },
        });
      const tooMany = await get('/v1/news', 'code=429');
      expect(tooMany.status).toBe(429);
      expect(parseRateLimit(tooMany.headers.get('ratelimit'))).toEqual([
        { policy: 'pro', remaining: 0, resetSeconds: Number(tooMany.headers.get('retry-after')) },
      ]);
      expect(parseRateLimitPolicy(tooMany.headers.get('ratelimit-policy'))).toEqual([
        { policy: 'pro', quota: plans.pro.rateLimit, windowSeconds: 60 },
      ]);
      for (const [path, prefer] of [
        ['/v1/news', 'code=401'],
        ['/v1/news', 'code=503'],
        ['/v1/news/search?q=fed', 'code=403'],
      ] as const) {
        const r = await get(path, prefer);
        expect(r.headers.get('x-ratelimit-limit'), `${path} ${prefer}`).toBeNull();
        expect(r.headers.get('ratelimit'), `${path} ${prefer}`).toBeNull();
        expect(r.headers.get('ratelimit-policy'), `${path} ${prefer}`).toBeNull();
      }
    },
  );
});
