/** The connection state table of the spec (§3) and the "Who may connect" table of asyncapi.yaml. */
import { describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { connect as netConnect } from 'node:net';
import { limits, stream, streamAddress } from '../../src/contract/index.js';
import { connect, connectAdmitted, LIVE, useStreamHarness } from './support.js';

const ctx = useStreamHarness();

const codes = stream.closeCodes;

describe('connecting: pro and max keys open and receive articles without sending anything', () => {
  it('opens a pro key and pushes a new article as one JSON message, without tickers', async () => {
    const { key } = await ctx.h.key('pro');
    const c = await connectAdmitted(ctx.h, { key });
    await ctx.h.ingest([
      { content: 'ECB raises rates by 25bp', tickers: [{ ticker: 'EUR', sentiment: 'positive', relevance: 1 }] },
    ]);
    const [msg] = await c.received(1);
    expect(msg).toMatchObject({
      content: 'ECB raises rates by 25bp',
      urgency: 'regular',
      sentiment: null,
      published_at: null,
    });
    expect(msg).not.toHaveProperty('tickers');
    expect(c.isOpen).toBe(true);
  });

  it('opens a max key and pushes articles with tickers (an empty array when none were detected)', async () => {
    const { key } = await ctx.h.key('max');
    const c = await connectAdmitted(ctx.h, { key });
    await ctx.h.ingest([
      { content: 'Apple beats estimates', tickers: [{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }] },
      { content: 'Markets quiet' },
    ]);
    const msgs = await c.received(2);
    expect(msgs.map((m) => m.tickers)).toEqual([[{ ticker: 'AAPL', sentiment: 'positive', relevance: 1 }], []]);
  });

  it('accepts the key in the X-API-Key header of the upgrade request', async () => {
    const { key } = await ctx.h.key('pro');
    const c = await connectAdmitted(ctx.h, { headerKey: key });
    await ctx.h.ingest([{ content: 'Oil jumps 4%' }]);
    expect((await c.received(1)).map((m) => m.content)).toEqual(['Oil jumps 4%']);
  });
});

describe('connecting with api_key given twice: closed with 1008 "Invalid API key", as REST refuses two keys', () => {
  /** The stream URL with `api_key` given once per value. */
  const withKeys = (...keys: string[]) => {
    const u = new URL(ctx.h.url);
    for (const k of keys) u.searchParams.append('api_key', k);
    return u.toString();
  };

  it('refuses api_key given twice, even with the same valid key twice', async () => {
    const { key } = await ctx.h.key('pro');
    const other = await ctx.h.key('pro');
    expect(await connect(withKeys(key, other.key)).closed).toEqual(codes.invalidKey);
    expect(await connect(withKeys(key, key)).closed).toEqual(codes.invalidKey);
    expect(await connect(withKeys(key, '')).closed).toEqual(codes.invalidKey);
  });

  it('lets the api_key query parameter win over the X-API-Key header (one key each)', async () => {
    const { key } = await ctx.h.key('pro');
    const c = connect(ctx.h.url, { key: `${LIVE}not-a-real-key`, headerKey: key });
    expect(await c.closed).toEqual(codes.invalidKey);
  });
});

describe('connecting: keys that may not stream are accepted as WebSockets, then closed with 1008', () => {
  it('closes a starter key with 1008 "Streaming requires the Pro or Max plan"', async () => {
    const { key } = await ctx.h.key('starter');
    const c = connect(ctx.h.url, { key });
    await c.opened;
    expect(await c.closed).toEqual(codes.planRequired);
    expect(codes.planRequired.code).toBe(1008);
  });

  it('closes an expired (cancelled) account with 1008 "Streaming requires the Pro or Max plan"', async () => {
    const { key, account_id } = await ctx.h.key('pro');
    await ctx.h.store.accounts.cancel(account_id, ctx.h.clock.now);
    expect(await connect(ctx.h.url, { key }).closed).toEqual(codes.planRequired);
  });

  it('closes a free account with 1008 "API key is inactive"', async () => {
    const { key } = await ctx.h.key('free');
    expect(await connect(ctx.h.url, { key }).closed).toEqual(codes.inactiveKey);
  });

  it('closes a deactivated key with 1008 "API key is inactive"', async () => {
    const { key, key_id } = await ctx.h.key('max');
    await ctx.h.store.accounts.setKeyActive(key_id, false);
    expect(await connect(ctx.h.url, { key }).closed).toEqual(codes.inactiveKey);
  });

  it('closes an unknown key with 1008 "Invalid API key"', async () => {
    expect(await connect(ctx.h.url, { key: `${LIVE}unknown` }).closed).toEqual(codes.invalidKey);
  });

  it('closes a missing key with 1008 "Invalid API key"', async () => {
    expect(await connect(ctx.h.url).closed).toEqual(codes.invalidKey);
  });

  it('closes a sandbox (test prefix) key with 1008 "Invalid API key"', async () => {
    expect(await connect(ctx.h.url, { key: 'fns_test_abc' }).closed).toEqual(codes.invalidKey);
  });

  it(`counts stream attempts in the IP guard: distinct key number ${limits.ipGuard.distinctKeys} from one IP is closed "API key is inactive", even a valid one`, async () => {
    const ip = '127.0.9.1';
    const { key } = await ctx.h.key('pro');
    for (let i = 1; i < limits.ipGuard.distinctKeys; i++)
      expect(await connect(ctx.h.url, { key: `${LIVE}wrong-${i}`, ip }).closed).toEqual(codes.invalidKey);
    expect(await connect(ctx.h.url, { key, ip }).closed).toEqual(codes.inactiveKey);
    // Another address is not affected.
    const other = await connectAdmitted(ctx.h, { key, ip: '127.0.9.2' });
    expect(other.isOpen).toBe(true);
  });

  it('never sends an article to a refused connection', async () => {
    const { key } = await ctx.h.key('starter');
    const c = connect(ctx.h.url, { key });
    await c.closed;
    await ctx.h.ingest([{ content: 'Late news' }]);
    expect(c.messages).toEqual([]);
  });
});

/** The first bytes the server answers to an upgrade request with this target and these Host lines. */
const rawUpgrade = (target: string, key: string, hostLines = 'Host: x\r\n') =>
  new Promise<string>((resolve, reject) => {
    let out = '';
    const socket = netConnect(ctx.h.port, '127.0.0.1', () =>
      socket.write(
        `GET ${target}?api_key=${key} HTTP/1.1\r\n${hostLines}Connection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      ),
    );
    socket.on('data', (d) => {
      out += d;
      if (out.startsWith('HTTP/1.1 101 ')) socket.destroy();
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });

describe('connecting: only the stream address upgrades', () => {
  it('answers an upgrade on another path with HTTP 404', async () => {
    const { key } = await ctx.h.key('pro');
    const c = connect(ctx.h.url, { key, path: '/v1/streams' });
    await expect(c.opened).rejects.toThrow('HTTP 404');
  });

  it.each([
    ['another path', '/v1/streams', 404],
    ['another spelling of the path', '/V1/stream', 404],
    ['a trailing slash', `${streamAddress}/`, 404],
    ['a target that is not a path', '*', 400],
  ])('answers an upgrade on %s with a problem body', async (_what, target, status) => {
    const reply = await rawUpgrade(target as string, (await ctx.h.key('pro')).key);
    expect(reply.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    expect(reply).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status,
      detail: expect.any(String),
    });
  });

  it('admits the absolute form of the stream address, as the plain path', async () => {
    const reply = await rawUpgrade(`http://127.0.0.1:${ctx.h.port}${streamAddress}`, (await ctx.h.key('pro')).key);
    expect(reply.startsWith('HTTP/1.1 101 ')).toBe(true);
  });

  it('leaves plain HTTP requests on the stream path to the HTTP handler', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: ctx.h.port, path: streamAddress, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(404);
  });
});

describe('connecting: a malformed WebSocket handshake is refused with a problem body, as every HTTP error', () => {
  /** The whole answer to an upgrade request on the stream address with these method and extra header lines. */
  const rawHandshake = (method: string, headers: string, key: string) =>
    new Promise<string>((resolve, reject) => {
      let out = '';
      const socket = netConnect(ctx.h.port, '127.0.0.1', () =>
        socket.write(
          `${method} ${streamAddress}?api_key=${key} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n` +
            `Upgrade: websocket\r\n${headers}Content-Length: 0\r\n\r\n`,
        ),
      );
      socket.on('data', (d) => (out += d));
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });

  it.each([
    ['no Sec-WebSocket-Key', 'GET', 'Sec-WebSocket-Version: 13\r\n', 400],
    [
      'an unsupported Sec-WebSocket-Version',
      'GET',
      'Sec-WebSocket-Version: 7\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
      400,
    ],
    [
      'a method other than GET',
      'POST',
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
      405,
    ],
  ])('answers a handshake with %s by a problem', async (_what, method, headers, status) => {
    const reply = await rawHandshake(method as string, headers as string, (await ctx.h.key('pro')).key);
    expect(reply.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    expect(reply).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status,
      detail: expect.any(String),
    });
  });
});

describe('connecting: an upgrade names one host, as every HTTP/1.1 request (RFC 9112 §3.2)', () => {
  it.each([
    ['no Host', ''],
    ['two Host lines', 'Host: x\r\nHost: y\r\n'],
  ])('refuses an upgrade with %s with a 400 problem', async (_what, hostLines) => {
    const reply = await rawUpgrade(streamAddress, (await ctx.h.key('pro')).key, hostLines);
    expect(reply.startsWith('HTTP/1.1 400 ')).toBe(true);
    expect(reply).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)).detail).toMatch(/Host/);
  });
});
