/**
 * Regression tests for the classes of defects a black-box review found, one describe per
 * class, over real sockets against the service's own HTTP server.
 */
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitBounds, operationParameters, problems } from '../../src/contract/index.js';
import { OPERATION_PATHS } from '../../src/http/admission.js';
import { createHttpServer } from '../../src/http/server.js';
import { ECHO_MAX_CHARS } from '../../src/http/target.js';
import { SemanticIndex } from '../../src/indexing/index.js';
import { header, rawRequest, type RawResponse } from '../fuzz/raw-http.js';
import { get, startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let ipSeq = 0;
const ip = () => `127.9.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;

beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => svc.close());

/** One request with the request line exactly as written. */
function send(requestLine: string, key?: string, headers: [string, string][] = []): Promise<RawResponse> {
  return rawRequest({
    port: svc.port,
    localAddress: ip(),
    requestLine,
    headers: [
      ['Host', `127.0.0.1:${svc.port}`],
      ...(key ? ([['X-API-Key', key]] as [string, string][]) : []),
      ['Connection', 'close'],
      ...headers,
    ],
  });
}

function expectProblemBody(r: RawResponse, status: number): any {
  expect(r.status).toBe(status);
  expect(header(r, 'content-type')).toBe('application/problem+json');
  const body = r.body as any;
  expect(body).toMatchObject({
    status,
    title: expect.any(String),
    type: expect.any(String),
    detail: expect.any(String),
  });
  return body;
}

const operations = Object.entries(OPERATION_PATHS) as [string, string][];

describe('every spelling of a request target gets the validation of the plain path, or a 400/404 problem', () => {
  it.each(operations)('%s: the absolute form is validated exactly like the plain path', async (_op, path) => {
    const { key } = await svc.key('max');
    const query = '?limit=999999999&bogus=1';
    const plain = await send(`GET ${path}${query} HTTP/1.1`, key);
    for (const absolute of [
      `http://127.0.0.1:${svc.port}${path}${query}`,
      `HTTP://LOCALHOST${path}${query}`,
      `https://api.fns.example${path}${query}`,
    ]) {
      const r = await send(`GET ${absolute} HTTP/1.1`, key);
      expect(expectProblemBody(r, 400)).toEqual(plain.body);
    }
  });

  it('answers the absolute form of a valid request as the plain path does', async () => {
    const { key } = await svc.key('max');
    await svc.ingest([{ content: 'one' }, { content: 'two' }, { content: 'three' }], svc.clock.now - 1000);
    const r = await send(`GET http://127.0.0.1:${svc.port}/v1/news?limit=2 HTTP/1.1`, key);
    expect(r.status).toBe(200);
    expect((r.body as any).count).toBe(2);
  });

  it('does not search for "undefined" when q is missing from an absolute-form request', async () => {
    const { key } = await svc.key('max');
    const r = await send(`GET http://127.0.0.1:${svc.port}/v1/news/search HTTP/1.1`, key);
    expect(expectProblemBody(r, 400).detail).toMatch(/^q is required/);
  });

  it.each(operations)('%s: other spellings of the path are a 404 naming the path meant', async (_op, path) => {
    const { key } = await svc.key('max');
    const upper = path.replace('/v1/', '/V1/');
    const spellings = [
      `/${path}`,
      path.replace(/\/(?=[^/]*$)/, '%2F'),
      `${path}/`,
      path.replace('/v1/', '/v1/./'),
      path.replace('/v1/', '/v1/x/../'),
      upper,
      path.replace('/v1/', '/v1//'),
    ];
    for (const spelling of spellings) {
      const r = await send(`GET ${spelling}?limit=999999999 HTTP/1.1`, key);
      const body = expectProblemBody(r, 404);
      expect(body.detail).toContain(`did you mean ${path}?`);
    }
  });

  it('drops a fragment: /v1/account/usage#x is /v1/account/usage', async () => {
    const { key } = await svc.key('max');
    expect((await send('GET /v1/account/usage#x HTTP/1.1', key)).status).toBe(200);
  });

  it('reads HEAD as GET without a body: validated and counted the same', async () => {
    const { key } = await svc.key('max');
    const ok = await rawRequest({
      port: svc.port,
      localAddress: ip(),
      requestLine: 'HEAD /v1/news HTTP/1.1',
      headers: [
        ['Host', 'x'],
        ['X-API-Key', key],
        ['Connection', 'close'],
      ],
      head: true,
    });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('');
    expect(header(ok, 'x-ratelimit-remaining')).toBeDefined();
    const bad = await rawRequest({
      port: svc.port,
      localAddress: ip(),
      requestLine: 'HEAD http://x/v1/news?limit=0 HTTP/1.1',
      headers: [
        ['Host', 'x'],
        ['X-API-Key', key],
        ['Connection', 'close'],
      ],
      head: true,
    });
    expect(bad.status).toBe(400);
  });

  it('refuses a target that is not a path or an http(s) URL with a 400 problem', async () => {
    for (const target of ['*', 'ftp://example.com/v1/news', 'v1/news']) {
      expectProblemBody(await send(`GET ${target} HTTP/1.1`), 400);
    }
  });

  it('keeps methods consistent: POST on a path is 405 with Allow, POST on another spelling is 404', async () => {
    const r405 = await send('POST /v1/news HTTP/1.1', undefined, [['Content-Length', '0']]);
    expectProblemBody(r405, 405);
    expect(header(r405, 'allow')).toBe('GET, HEAD');
    expectProblemBody(await send('POST /v1/news/ HTTP/1.1', undefined, [['Content-Length', '0']]), 404);
    expectProblemBody(await send('GET /v1/news/ HTTP/1.1'), 404);
  });
});

describe('no handler trusts a parameter the validator did not check: the store clamps limit too', () => {
  it('never returns more than the contract maximum, whatever limit reaches the store', async () => {
    await svc.ingest(
      Array.from({ length: limitBounds.max + 20 }, (_, i) => ({ content: `n${i}` })),
      svc.clock.now - 1000,
    );
    const query = { afterMs: 0, limit: 999_999_999 };
    expect(await svc.store.articles.listJson(query, true)).toHaveLength(limitBounds.max);
    expect(await svc.store.articles.list(query)).toHaveLength(limitBounds.max);
    expect(await svc.store.articles.listJson({ afterMs: 0, limit: -5 }, false)).toHaveLength(limitBounds.min);
    expect(await svc.store.articles.listJson({ afterMs: 0, limit: Number.NaN }, false)).toHaveLength(limitBounds.max);
  });
  it('never ranks more than the contract maximum in search either', async () => {
    await svc.ingest(
      Array.from({ length: limitBounds.max + 20 }, (_, i) => ({ content: `rates news ${i}` })),
      svc.clock.now - 1000,
    );
    await svc.worker.drain();
    const index = new SemanticIndex(svc.store, svc.embedder);
    expect(await index.search('rates', 999_999_999)).toHaveLength(limitBounds.max);
  });
});

describe('unknown parameters are refused whatever their name, __proto__ forms included', () => {
  it.each([
    '__proto__[x]=1',
    '__proto__=1',
    'constructor[prototype][x]=1',
    'toString=1',
    'hasOwnProperty=1',
    'limit[]=5',
    '=5',
  ])('answers %s with 400 unknown parameter', async (query) => {
    const { key } = await svc.key('max');
    const r = await get(svc.port, `/v1/news?${query}`, { key, ip: ip() });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/is not a parameter of this operation$/);
  });
});

describe('a problem detail echoes at most ECHO_MAX_CHARS characters of client input', () => {
  const long = 'x'.repeat(15_000);
  it('caps the path of a 404', async () => {
    const r = await send(`GET /${long} HTTP/1.1`);
    const body = expectProblemBody(r, 404);
    expect(body.detail.length).toBeLessThan(ECHO_MAX_CHARS + 40);
    expect(body.detail).toBe(`No endpoint at /${'x'.repeat(ECHO_MAX_CHARS - 1)}…`);
  });
  it('caps an unknown parameter name', async () => {
    const { key } = await svc.key('max');
    const r = await send(`GET /v1/news?${long}=1 HTTP/1.1`, key);
    expect(expectProblemBody(r, 400).detail.length).toBeLessThan(ECHO_MAX_CHARS + 50);
  });
  it('caps the method of a 405', async () => {
    const r = await send(`PATCH /v1/news HTTP/1.1`, undefined, [['Content-Length', '0']]);
    expect(expectProblemBody(r, 405).detail).toBe('PATCH is not allowed on /v1/news; use GET');
  });
});

describe('impossible dates are refused, real ones accepted', () => {
  it.each([
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T10:60:00Z',
    '2026-11-21T10:00:00+24:00',
    '2026-11-21T10:00:00',
  ])('answers since=%s with 400 naming since', async (since) => {
    const { key } = await svc.key('max');
    const r = await get(svc.port, `/v1/news?since=${encodeURIComponent(since)}`, { key, ip: ip() });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/^since must be/);
  });
  it.each(['2028-02-29T10:00:00Z', '2026-11-20T23:59:60Z', '2026-11-21T10:00:00.123456+05:30'])(
    'accepts since=%s',
    async (since) => {
      const { key } = await svc.key('max');
      expect((await get(svc.port, `/v1/news?since=${encodeURIComponent(since)}`, { key, ip: ip() })).status).toBe(200);
    },
  );
});

describe('every HTTP error the process emits is a problem body, Node-level rejections included', () => {
  it('answers headers over the size limit with a 431 problem', async () => {
    const r = await send('GET /v1/news HTTP/1.1', undefined, [['X-Padding', 'p'.repeat(20_000)]]);
    expectProblemBody(r, 431);
  });
  it('answers an over-long URL with a 431 problem', async () => {
    expectProblemBody(await send(`GET /v1/news?q=${'a'.repeat(20_000)} HTTP/1.1`), 431);
  });
  it.each([
    ['a bad byte in the request line', 'GET /v1/\x01news HTTP/1.1', []],
    ['an invalid method', 'G(T /v1/news HTTP/1.1', []],
    ['bad framing', 'GET /v1/news HTTP/1.1', [['Content-Length', 'abc']]],
    [
      'conflicting framing',
      'GET /v1/news HTTP/1.1',
      [
        ['Content-Length', '1'],
        ['Transfer-Encoding', 'chunked'],
      ],
    ],
    ['an unknown HTTP version', 'GET /v1/news HTTP/9.1', []],
  ] as [string, string, [string, string][]][])('answers %s with a 400 problem', async (_what, line, headers) => {
    expectProblemBody(await send(line, undefined, headers), 400);
  });
  it('answers an HTTP/1.1 request without Host with a 400 problem', async () => {
    const r = await rawRequest({
      port: svc.port,
      localAddress: ip(),
      requestLine: 'GET /v1/news HTTP/1.1',
      headers: [['Connection', 'close']],
    });
    expect(expectProblemBody(r, 400).detail).toMatch(/Host/);
  });
  it('answers an unmet Expect with a 417 problem', async () => {
    expectProblemBody(await send('GET /v1/news HTTP/1.1', undefined, [['Expect', 'teapot']]), 417);
  });
  it('answers a request that times out with a 408 problem', async () => {
    const server = createHttpServer((_req, res) => res.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    server.once('connection', (socket) => {
      const err = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
      setImmediate(() => server.emit('clientError', err, socket));
    });
    const text = await new Promise<string>((resolve) => {
      let out = '';
      const c = connect(port, '127.0.0.1', () => c.write('GET /v1/news HTTP/1.1\r\n'));
      c.on('data', (d) => (out += d));
      c.on('close', () => resolve(out));
    });
    server.close();
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 408,
      detail: expect.any(String),
    });
  });
});

describe('a WebSocket handshake while no stream listens (shutting down) is answered as HTTP, not dropped', () => {
  it('the server without an upgrade listener answers the handshake with its HTTP response', async () => {
    const server = createHttpServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const text = await new Promise<string>((resolve) => {
      let out = '';
      const c = connect(port, '127.0.0.1', () =>
        c.write(
          'GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
            'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
        ),
      );
      c.on('data', (d) => {
        out += d;
        c.end();
      });
      c.on('close', () => resolve(out));
    });
    server.close();
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
  });
});

describe('a request names one host: two Host lines are a 400 problem (RFC 9112 §3.2)', () => {
  it('refuses a second Host line, even a valid key and path', async () => {
    const { key } = await svc.key('max');
    const r = await send('GET /v1/account/usage HTTP/1.1', key, [['Host', 'other.example']]);
    expect(expectProblemBody(r, 400).detail).toMatch(/Host/);
  });
});

describe('CONNECT is answered with a 400 problem, not a dropped connection', () => {
  it('refuses CONNECT host:port with a problem naming the target', async () => {
    const r = await send('CONNECT 127.0.0.1:1 HTTP/1.1');
    expect(expectProblemBody(r, 400).detail).toContain('127.0.0.1:1');
  });
});

describe('responses depend on the key, so no shared cache may keep them', () => {
  it('sends Cache-Control: private, no-store on successes, refusals and 404s', async () => {
    const { key } = await svc.key('max');
    for (const [path, k] of [
      ['/v1/news', key],
      ['/v1/account/usage', key],
      ['/v1/news', undefined],
      ['/v1/news?limit=0', key],
      ['/nowhere', key],
    ] as const) {
      const r = await get(svc.port, path, { ...(k ? { key: k } : {}), ip: ip() });
      expect(r.headers['cache-control'], path).toBe('private, no-store');
    }
  });
});

describe('the 400 detail of a request names the parameter, from the contract', () => {
  it('names limit for an out-of-range limit on every operation that takes one', async () => {
    const { key } = await svc.key('max');
    for (const [op, path] of operations) {
      if (!operationParameters(op).some((p) => p.name === 'limit')) continue;
      const q = operationParameters(op).some((p) => p.name === 'q' && p.required) ? 'q=fed&' : '';
      const r = await get(svc.port, `${path}?${q}limit=${limitBounds.max + 1}`, { key, ip: ip() });
      expect(r.status).toBe(problems.invalidParameter.status);
      expect(r.body.detail).toMatch(/^limit must be/);
    }
  });
});
