/**
 * The typed client (clients/typescript), against the partner mock and the real service, over HTTP and
 * WebSocket like a partner's program: typed REST calls, problems as `FnsProblem`, the wait on `429`,
 * and a stream that reconnects on "later", stops on "stop", detects a dead connection and never
 * delivers an article twice.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import {
  FnsClient,
  FnsProblem,
  FnsStreamClosed,
  reconnectDelayMs,
  type StreamEvent,
} from '../../clients/typescript/src/index.js';
import { problems, stream as streamRules } from '../../src/contract/index.js';
import { loopbackFetch, nextLoopbackAddress } from '../parity/loopback-fetch.js';
import { startMockTarget, startRealTarget, type ParityTarget } from '../parity/targets.js';

function client(
  target: ParityTarget,
  apiKey: string,
  extra: Partial<ConstructorParameters<typeof FnsClient>[0]> = {},
): FnsClient {
  return new FnsClient({ baseUrl: target.baseUrl, apiKey, fetch: loopbackFetch(nextLoopbackAddress()), ...extra });
}
const socket = () => ({ localAddress: nextLoopbackAddress() });

async function take<T>(it: AsyncGenerator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) {
    out.push(x);
    if (out.length === n) break;
  }
  return out;
}

describe.each([
  ['mock', startMockTarget],
  ['real', startRealTarget],
] as const)('the client against the %s', (_name, start) => {
  let target: ParityTarget;
  beforeAll(async () => {
    target = await start();
  });
  afterAll(() => target.close());

  describe('REST calls are typed and return the contract bodies', () => {
    it('lists, searches and reads usage', async () => {
      const fns = client(target, target.keys.max);
      const list = await fns.listNews({ limit: 2 });
      expect(list.count).toBe(list.articles.length);
      expect(list.articles.every((a) => Array.isArray(a.tickers))).toBe(true);
      const found = await fns.searchNews({ q: 'rate decision', limit: 1 });
      expect(found.query).toBe('rate decision');
      const usage = await fns.getAccountUsage();
      expect(usage.tier).toBe('max');
      const status = await fns.getServiceStatus();
      expect(status.components.map((c) => c.id)).toEqual(['rest', 'stream', 'webhooks', 'search']);
      expect(['operational', 'degraded', 'outage']).toContain(status.state);
    });

    it('turns a problem into FnsProblem with the contract text', async () => {
      const err = await client(target, target.unknownKey)
        .listNews()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FnsProblem);
      expect(err).toMatchObject({ status: 401, detail: problems.invalidApiKey.detail });
    });
  });

  describe('the stream', () => {
    it('delivers articles in order, each once', async () => {
      const fns = client(target, target.keys.pro);
      const it = fns.stream({ webSocket: socket() });
      const arrivals = setInterval(() => void target.arrive(), 100);
      try {
        const got = await take(it, 3);
        const ids = got.map((a) => a.id);
        expect([...ids].sort()).toEqual(ids);
        expect(new Set(ids).size).toBe(3);
        expect(got.every((a) => a.tickers === undefined)).toBe(true);
      } finally {
        clearInterval(arrivals);
      }
    });

    it('stops with FnsStreamClosed on a close that means stop (a plan without streaming)', async () => {
      const events: StreamEvent[] = [];
      const it = client(target, target.keys.starter).stream({ webSocket: socket(), onEvent: (e) => events.push(e) });
      const err = await take(it, 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FnsStreamClosed);
      expect(err).toMatchObject({
        code: streamRules.closeCodes.planRequired.code,
        reason: streamRules.closeCodes.planRequired.reason,
      });
      expect(events.filter((e) => e.type === 'retry')).toEqual([]);
    });
  });
});

describe('waiting on 429 Retry-After', () => {
  const tooMany = () =>
    new Response(JSON.stringify(problems.rateLimitExceeded), {
      status: 429,
      headers: { 'content-type': 'application/problem+json', 'retry-after': '2' },
    });
  const ok = () =>
    new Response(JSON.stringify({ tier: 'pro', rate_limit: 60, period_end: null }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });

  it('is off by default: the 429 is thrown with its Retry-After', async () => {
    const fns = new FnsClient({ baseUrl: 'http://fns.invalid', apiKey: 'k', fetch: async () => tooMany() });
    await expect(fns.getAccountUsage()).rejects.toMatchObject({ status: 429, retryAfterSeconds: 2 });
  });

  it('when asked, waits Retry-After and tries again', async () => {
    const replies = [tooMany(), ok()];
    const waits: number[] = [];
    const fns = new FnsClient({
      baseUrl: 'http://fns.invalid',
      apiKey: 'k',
      fetch: async () => replies.shift()!,
      waitOnRateLimit: true,
      sleep: async (ms) => void waits.push(ms),
    });
    await expect(fns.getAccountUsage()).resolves.toMatchObject({ tier: 'pro' });
    expect(waits).toEqual([2000]);
  });

  it('gives up when the wait would be longer than allowed', async () => {
    const fns = new FnsClient({
      baseUrl: 'http://fns.invalid',
      apiKey: 'k',
      fetch: async () => tooMany(),
      waitOnRateLimit: { maxWaitMs: 1000 },
      sleep: async () => {},
    });
    await expect(fns.getAccountUsage()).rejects.toBeInstanceOf(FnsProblem);
  });
});

describe('reconnecting', () => {
  it('backs off exponentially with jitter, up to the maximum', () => {
    expect(reconnectDelayMs(1, 500, 30_000, () => 1)).toBe(500);
    expect(reconnectDelayMs(2, 500, 30_000, () => 1)).toBe(1000);
    expect(reconnectDelayMs(2, 500, 30_000, () => 0)).toBe(500);
    expect(reconnectDelayMs(20, 500, 30_000, () => 1)).toBe(30_000);
  });

  /** A stand-in server that plays a scripted behaviour per connection. */
  async function scripted(behaviours: ((ws: import('ws').WebSocket) => void)[]) {
    const server = createServer();
    const wss = new WebSocketServer({ server });
    let n = 0;
    wss.on('connection', (ws) => behaviours[Math.min(n++, behaviours.length - 1)]!(ws));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      connections: () => n,
      close: () => new Promise<void>((r) => (wss.close(), server.closeAllConnections(), server.close(() => r()))),
    };
  }
  const article = (id: string) =>
    JSON.stringify({
      id,
      content: `a ${id}`,
      urgency: 'regular',
      sentiment: null,
      published_at: null,
      received_at: '2026-11-22T00:00:00.000Z',
    });

  it('reconnects on "try again later" and never delivers an id twice or backwards', async () => {
    const server = await scripted([
      (ws) => (
        ws.send(article('01A')),
        ws.send(article('01B')),
        ws.close(streamRules.closeCodes.slowConsumer.code, streamRules.closeCodes.slowConsumer.reason)
      ),
      (ws) => (
        ws.send(article('01B')),
        ws.send(article('01A')),
        ws.send(article('01C')),
        ws.close(streamRules.closeCodes.shuttingDown.code, streamRules.closeCodes.shuttingDown.reason)
      ),
      (ws) => ws.send(article('01D')),
    ]);
    try {
      const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
      const got = await take(fns.stream({ backoff: { initialMs: 10, maxMs: 20 } }), 4);
      expect(got.map((a) => a.id)).toEqual(['01A', '01B', '01C', '01D']);
      expect(server.connections()).toBe(3);
    } finally {
      await server.close();
    }
  });

  describe('"Only one stream connection per account" may be a slot not freed yet: retried for slotGraceMs, then final', () => {
    const { code, reason } = streamRules.closeCodes.secondConnection;
    const unavailable = streamRules.closeCodes.unavailable;

    it('right after its own connection dropped', async () => {
      const server = await scripted([
        (ws) => (ws.send(article('01A')), setTimeout(() => ws.terminate(), 20)),
        (ws) => ws.close(code, reason),
        (ws) => ws.send(article('01B')),
      ]);
      try {
        const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
        const got = await take(fns.stream({ backoff: { initialMs: 5, maxMs: 10 } }), 2);
        expect(got.map((a) => a.id)).toEqual(['01A', '01B']);
      } finally {
        await server.close();
      }
    });

    it('a phantom slot after a 1013: refused twice, then the stream opens', async () => {
      const server = await scripted([
        (ws) => ws.close(unavailable.code, unavailable.reason),
        (ws) => ws.close(code, reason),
        (ws) => ws.close(code, reason),
        (ws) => ws.send(article('01A')),
      ]);
      try {
        const events: StreamEvent[] = [];
        const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
        const got = await take(fns.stream({ backoff: { initialMs: 5, maxMs: 10 }, onEvent: (e) => events.push(e) }), 1);
        expect(got.map((a) => a.id)).toEqual(['01A']);
        expect(server.connections()).toBe(4);
        expect(events.filter((e) => e.type === 'close')).toEqual([
          { type: 'close', code: unavailable.code, reason: unavailable.reason, willRetry: true },
          { type: 'close', code, reason, willRetry: true },
          { type: 'close', code, reason, willRetry: true },
        ]);
      } finally {
        await server.close();
      }
    });

    it('a first connection refused too: retried, and final once the refusals have lasted slotGraceMs', async () => {
      const refused = await scripted([(ws) => ws.close(code, reason)]);
      try {
        const events: StreamEvent[] = [];
        const fns = new FnsClient({ baseUrl: refused.url, apiKey: 'k' });
        const started = Date.now();
        await expect(
          take(
            fns.stream({ slotGraceMs: 150, backoff: { initialMs: 20, maxMs: 40 }, onEvent: (e) => events.push(e) }),
            1,
          ),
        ).rejects.toMatchObject({ code, reason });
        expect(Date.now() - started).toBeGreaterThanOrEqual(150);
        expect(refused.connections()).toBeGreaterThan(1);
        const closes = events.filter((e) => e.type === 'close');
        expect(closes.slice(0, -1).every((e) => e.type === 'close' && e.willRetry)).toBe(true);
        expect(closes.at(-1)).toEqual({ type: 'close', code, reason, willRetry: false });
      } finally {
        await refused.close();
      }
    });

    it('an established connection resets the run: refusals after it get a fresh slotGraceMs', async () => {
      const server = await scripted([
        (ws) => ws.close(code, reason),
        (ws) => (ws.send(article('01A')), setTimeout(() => ws.terminate(), 20)),
        (ws) => ws.close(code, reason),
        (ws) => ws.send(article('01B')),
      ]);
      try {
        const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
        const got = await take(fns.stream({ slotGraceMs: 5_000, backoff: { initialMs: 5, maxMs: 10 } }), 2);
        expect(got.map((a) => a.id)).toEqual(['01A', '01B']);
        expect(server.connections()).toBe(4);
      } finally {
        await server.close();
      }
    });
  });

  it('skips a message that is not an article instead of failing', async () => {
    const server = await scripted([(ws) => (ws.send('not json'), ws.send('{"no":"id"}'), ws.send(article('01A')))]);
    try {
      const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
      expect((await take(fns.stream(), 1)).map((a) => a.id)).toEqual(['01A']);
    } finally {
      await server.close();
    }
  });

  it('treats a connection silent past the keep-alive bound as dead and reconnects', async () => {
    const server = await scripted([() => {}, (ws) => ws.send(article('01A'))]);
    try {
      const events: StreamEvent[] = [];
      const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
      const got = await take(
        fns.stream({ deadAfterMs: 200, backoff: { initialMs: 10, maxMs: 20 }, onEvent: (e) => events.push(e) }),
        1,
      );
      expect(got.map((a) => a.id)).toEqual(['01A']);
      expect(events.map((e) => e.type)).toContain('dead');
    } finally {
      await server.close();
    }
  });

  it('a protocol ping counts as life: a quiet market is not a dead connection', async () => {
    const server = await scripted([
      (ws) => {
        const t = setInterval(() => ws.ping(), 50);
        setTimeout(() => (clearInterval(t), ws.send(article('01A'))), 600);
        ws.on('close', () => clearInterval(t));
      },
    ]);
    try {
      const events: StreamEvent[] = [];
      const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
      await take(fns.stream({ deadAfterMs: 200, onEvent: (e) => events.push(e) }), 1);
      expect(events.map((e) => e.type)).toEqual(['open']);
    } finally {
      await server.close();
    }
  });

  it('an abort signal ends the iterator without an error', async () => {
    const server = await scripted([() => {}]);
    try {
      const ac = new AbortController();
      const fns = new FnsClient({ baseUrl: server.url, apiKey: 'k' });
      setTimeout(() => ac.abort(), 100);
      await expect(take(fns.stream({ signal: ac.signal }), 1)).resolves.toEqual([]);
    } finally {
      await server.close();
    }
  });
});
