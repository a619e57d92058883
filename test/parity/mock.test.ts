/**
 * What only the mock does (docs/mock.md): the `Prefer` header to reach the other documented responses,
 * the extra sandbox tiers (`expired`, `free`), the firehose pace and its in-memory history, one stream
 * per sandbox key, and a clean shutdown of the Prism child.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits, plans, problems, stream as streamRules } from '../../src/contract/index.js';
import { startMock, type RunningMock } from '../../src/mock/index.js';
import { parsePrefer, preferProblem } from '../../src/mock/prefer.js';
import { loopbackFetch, nextLoopbackAddress } from './loopback-fetch.js';
import { opened, useStreamClients } from './stream-client.js';
import { clientOf } from './targets.js';
import { deref, loadYaml } from '../support/specs.js';

/** Every operation of openapi.yaml: a request target, its documented statuses and their named examples. */
const openapi = loadYaml('openapi.yaml');
const contractOperations = Object.entries<any>(openapi.paths).flatMap(([path, item]) =>
  Object.values<any>(item).map((op) => {
    const statuses = Object.keys(op.responses);
    const examples = Object.fromEntries(
      statuses.map((s) => [
        s,
        [
          ...new Set(
            Object.values<any>(deref(openapi, op.responses[s]).content ?? {}).flatMap((m) =>
              Object.keys(m.examples ?? {}),
            ),
          ),
        ],
      ]),
    );
    const required = (op.parameters ?? []).map((p: any) => deref(openapi, p)).filter((p: any) => p.required);
    const query = required.map((p: any) => `${p.name}=${encodeURIComponent(String(p.example ?? 'fed'))}`).join('&');
    // Counted operations send rate-limit headers on their 200 (the contract's response headers).
    const counted = 'X-RateLimit-Limit' in (deref(openapi, op.responses['200']).headers ?? {});
    return {
      id: op.operationId as string,
      target: query ? `${path}?${query}` : path,
      statuses,
      examples: examples as Record<string, string[]>,
      counted,
    };
  }),
);

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
    const { error, response } = await clientOf({ baseUrl: mock.url }, mock.keys.pro).GET('/v1/news', {
      headers: { Prefer: 'code=429' },
    });
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
    expect(response.headers.get('retry-after')).toBe(String(limits.unavailableRetryAfterSeconds));
  });

  it.each(['/v1/news', '/v1/account/usage'] as const)(
    'code=503 on %s: the database-outage problem with Retry-After, not counted',
    async (path) => {
      const { error, response } = await clientOf({ baseUrl: mock.url }, mock.keys.max).GET(path, {
        headers: { Prefer: 'code=503' },
      });
      expect(response.status).toBe(503);
      expect(error).toEqual(problems.serviceUnavailable);
      expect(response.headers.get('retry-after')).toBe(String(limits.unavailableRetryAfterSeconds));
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    },
  );

  it('code=401: the key problem, without rate-limit headers (refusals do not count)', async () => {
    const { error, response } = await clientOf({ baseUrl: mock.url }, mock.keys.max).GET('/v1/news', {
      headers: { Prefer: 'code=401' },
    });
    expect(response.status).toBe(401);
    expect(error).toEqual(problems.invalidApiKey);
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('code=403 on search: the Max-plan text, or with example=inactiveApiKey the inactive-key text; not counted', async () => {
    const client = clientOf({ baseUrl: mock.url }, mock.keys.max);
    const plain = await client.GET('/v1/news/search', {
      params: { query: { q: 'fed' } },
      headers: { Prefer: 'code=403' },
    });
    expect(plain.response.status).toBe(403);
    expect(plain.error).toEqual(problems.maxPlanOnly);
    expect(plain.response.headers.get('x-ratelimit-limit')).toBeNull();
    const inactive = await client.GET('/v1/news/search', {
      params: { query: { q: 'fed' } },
      headers: { Prefer: 'code=403, example=inactiveApiKey' },
    });
    expect(inactive.error).toEqual(problems.inactiveApiKey);
  });

  it('example=empty on list and example=noResults on search: empty results, q still echoed', async () => {
    const client = clientOf({ baseUrl: mock.url }, mock.keys.max);
    const list = await client.GET('/v1/news', { headers: { Prefer: 'example=empty' } });
    expect(list.data).toEqual({ count: 0, articles: [], next: null });
    expect(list.response.headers.get('link')).toBeNull();
    const search = await client.GET('/v1/news/search', {
      params: { query: { q: 'my own query' } },
      headers: { Prefer: 'example=noResults' },
    });
    expect(search.data).toEqual({ count: 0, query: 'my own query', articles: [], next: null });
  });

  describe('a Prefer the contract cannot satisfy: a 400 naming what the operation documents', () => {
    const raw = (path: string, key: string, prefer: string) =>
      fetch(`${mock.url}${path}`, { headers: { 'X-API-Key': key, Prefer: prefer } });
    const problemOf = async (r: Response) => ({ status: r.status, media: media(r), body: await r.json() });

    it.each(contractOperations.map((o) => [o.id, o] as const))(
      '%s: code=418 (and code=abc) names the documented statuses',
      async (_id, o) => {
        for (const prefer of ['code=418', 'code=abc']) {
          const r = await raw(o.target, mock.keys.max, prefer);
          const value = prefer.slice('code='.length);
          expect(await problemOf(r)).toEqual({
            status: 400,
            media: 'application/problem+json',
            body: {
              ...problems.invalidParameter,
              detail: `Prefer code=${value} is not documented for ${o.id}; documented: ${o.statuses.join(', ')}`,
            },
          });
          // Admitted first, as every 400: counted operations carry the rate-limit headers, usage does not.
          expect(r.headers.get('x-ratelimit-limit')).toBe(o.counted ? String(plans.max.rateLimit) : null);
        }
      },
    );

    it.each(contractOperations.map((o) => [o.id, o] as const))(
      '%s: an unknown example name names the examples of the response',
      async (_id, o) => {
        const success = o.statuses.find((s) => s.startsWith('2'))!;
        const { body, status } = await problemOf(await raw(o.target, mock.keys.max, 'example=noSuchExample'));
        expect(status).toBe(400);
        expect(body.detail).toBe(
          `Prefer example=noSuchExample is not documented for ${o.id} ${success}; documented: ${o.examples[success]!.join(', ')}`,
        );
      },
    );

    it('an example of another status, with code: the examples of that status', async () => {
      const list = contractOperations.find((o) => o.id === 'listNews')!;
      const { body, status } = await problemOf(await raw(list.target, mock.keys.max, 'code=403, example=maxPlanOnly'));
      expect(status).toBe(400);
      expect(body.detail).toBe(
        `Prefer example=maxPlanOnly is not documented for listNews 403; documented: ${list.examples['403']!.join(', ')}`,
      );
    });

    it("the mock's own checks still come first: a bad key is 401, a bad parameter the usual 400", async () => {
      expect((await problemOf(await raw('/v1/news', 'fns_test_nobody', 'code=418'))).body).toEqual(
        problems.invalidApiKey,
      );
      const bad = await problemOf(await raw('/v1/news?limit=0', mock.keys.max, 'code=418'));
      expect(bad.body.detail).toMatch(/^limit /);
    });

    it('reads Prefer as Prism does: case-insensitive tokens, quoted values, the first occurrence wins', () => {
      const prefs = parsePrefer('Code="418"; q=1, code=200, EXAMPLE=empty, dynamic');
      expect([...prefs]).toEqual([
        ['code', '418'],
        ['example', 'empty'],
        ['dynamic', true],
      ]);
      expect(preferProblem('listNews', 'Code="418"')).toMatch(/^Prefer code=418 is not documented for listNews/);
    });

    it('every documented status and example stays reachable (the check refuses nothing the contract has)', async () => {
      for (const o of contractOperations) {
        for (const status of o.statuses) {
          for (const example of [undefined, ...o.examples[status]!]) {
            const prefer = example === undefined ? `code=${status}` : `code=${status}, example=${example}`;
            const r = await raw(o.target, mock.keys.max, prefer);
            expect(r.status, `${o.id} ${prefer}`).toBe(Number(status));
            await r.arrayBuffer();
          }
        }
      }
    });
  });

  it('without Prefer, the key still decides: a pro key never sees tickers, even from the max example', async () => {
    const { data } = await clientOf({ baseUrl: mock.url }, mock.keys.pro).GET('/v1/news', {
      headers: { Prefer: 'example=maxKey' },
    });
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
    expect((await client.GET('/v1/news/search', { params: { query: { q: 'fed' } } })).error).toEqual(
      problems.maxPlanOnly,
    );
    expect(await connect({ key: mock.keys.expired }).closed).toEqual(streamRules.closeCodes.planRequired);
  });

  it('fns_test_free: blocked with 403 API key is inactive, usage still answers', async () => {
    const client = clientOf({ baseUrl: mock.url }, mock.keys.free);
    for (const r of [
      await client.GET('/v1/news'),
      await client.GET('/v1/news/search', { params: { query: { q: 'fed' } } }),
    ]) {
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
    expect(mock.keys).toEqual({
      starter: 'fns_test_starter',
      pro: 'fns_test_pro',
      max: 'fns_test_max',
      expired: 'fns_test_expired',
      free: 'fns_test_free',
    });
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

  it('remembers the last streamHistory articles: an after older than those replays all it remembers, then goes on live', async () => {
    const other = await startMock({ port: 0, streamIntervalMs: 3_600_000, streamHistory: 5 });
    try {
      const pushed = Array.from({ length: 8 }, () => other.stream.pushNext().id);
      const c = connect({ key: other.keys.max, after: pushed[0]! }, other.url);
      await opened(c);
      const replayed = (await c.take(5)) as { id: string }[];
      expect(replayed.map((a) => a.id)).toEqual(pushed.slice(-5));
      const live = other.stream.pushNext().id;
      expect(((await c.take(6)) as { id: string }[]).map((a) => a.id)).toEqual([...pushed.slice(-5), live]);
      expect(other.stream.size).toBe(1);
    } finally {
      await other.close();
    }
  }, 60_000);

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
