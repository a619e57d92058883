import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nonPublicReason } from '../../../src/net/index.js';
import {
  fetchFeed,
  parseFeed,
  parseRetryAfter,
  RETRY_AFTER_MAX_MS,
  type FetchOptions,
  type FetchResult,
} from '../../../src/sources/feed/index.js';
import { FEED_FIXTURES, startFixtureServer, type FixtureServer } from '../fixture-server.js';

const NO_VALIDATORS = { etag: null, lastModified: null };
const OPTS: FetchOptions = {
  userAgent: 'fns-test/1.0 (+https://fns.example/bot)',
  connectTimeoutMs: 2_000,
  timeoutMs: 5_000,
  maxBytes: 1_000_000,
  maxRedirects: 5,
  // The fixture server is on loopback (FEED_ALLOW_PRIVATE); the address rules have tests of their own below.
  allowPrivate: true,
};
const fileBytes = (name: string): Buffer => readFileSync(path.join(FEED_FIXTURES, name));

function ok(r: FetchResult): Extract<FetchResult, { kind: 'ok' }> {
  if (r.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(r)}`);
  return r;
}
function failed(r: FetchResult): Extract<FetchResult, { kind: 'error' }> {
  if (r.kind !== 'error') throw new Error(`expected an error, got ${r.kind}`);
  return r;
}

let server: FixtureServer;
beforeAll(async () => {
  server = await startFixtureServer();
});
afterAll(async () => {
  await server.close();
});

describe('a plain fetch returns the bytes and names the service', () => {
  it('returns status, body, content type, validators and final URL', async () => {
    const r = ok(await fetchFeed(server.url('/files/rss2.xml'), NO_VALIDATORS, OPTS));
    expect(r.status).toBe(200);
    expect(Buffer.from(r.body).equals(fileBytes('rss2.xml'))).toBe(true);
    expect(r.contentType).toBe('application/xml');
    expect(r.finalUrl).toBe(server.url('/files/rss2.xml'));
    expect(r.validators).toEqual(NO_VALIDATORS);
  });
  it("sends the caller's User-Agent, asks for feeds and for compression", async () => {
    await fetchFeed(server.url('/files/atom.xml'), NO_VALIDATORS, OPTS);
    const req = server.hits('/files/atom.xml').at(-1)!;
    expect(req.headers['user-agent']).toBe(OPTS.userAgent);
    expect(req.headers.accept).toContain('application/rss+xml');
    expect(req.headers['accept-encoding']).toMatch(/gzip/);
    expect(req.headers['accept-encoding']).toMatch(/br/);
  });
  it('is never an exception for an unusable URL', async () => {
    expect(failed(await fetchFeed('not a url', NO_VALIDATORS, OPTS)).error).toBe('network');
    expect(failed(await fetchFeed('ftp://127.0.0.1/feed', NO_VALIDATORS, OPTS)).error).toBe('network');
  });
});

describe('conditional GET: an unchanged feed costs a 304', () => {
  it('sends ETag and Last-Modified back and gets 304, then 200 when items are added', async () => {
    server.setFeed('/cond.xml', {
      format: 'rss',
      items: [{ id: 'a', title: 'First story', link: '/a', published: Date.UTC(2025, 0, 1) }],
    });
    const first = ok(await fetchFeed(server.url('/cond.xml'), NO_VALIDATORS, OPTS));
    expect(first.validators.etag).toMatch(/^".+"$/);
    expect(first.validators.lastModified).not.toBeNull();

    const second = await fetchFeed(server.url('/cond.xml'), first.validators, OPTS);
    expect(second).toEqual({ kind: 'not-modified', status: 304, validators: first.validators });
    const sent = server.hits('/cond.xml').at(-1)!.headers;
    expect(sent['if-none-match']).toBe(first.validators.etag);
    expect(sent['if-modified-since']).toBe(first.validators.lastModified);

    server.addItems('/cond.xml', { id: 'b', title: 'Second story', link: '/b', published: Date.UTC(2025, 0, 2) });
    const third = ok(await fetchFeed(server.url('/cond.xml'), first.validators, OPTS));
    expect(third.validators.etag).not.toBe(first.validators.etag);
    const feed = parseFeed(third.body, { contentType: third.contentType, baseUrl: third.finalUrl });
    expect(feed.items.map((i) => i.guid)).toEqual(['b', 'a']);
  });
  it('works with Last-Modified alone', async () => {
    server.setFeed('/cond-lm.xml', { format: 'atom', items: [{ id: 'x', title: 'X', link: '/x' }] });
    const first = ok(await fetchFeed(server.url('/cond-lm.xml'), NO_VALIDATORS, OPTS));
    const r = await fetchFeed(
      server.url('/cond-lm.xml'),
      { etag: null, lastModified: first.validators.lastModified },
      OPTS,
    );
    expect(r.kind).toBe('not-modified');
  });
});

describe('compressed bodies are decoded', () => {
  it.each(['gzip', 'br'] as const)('%s', async (encoding) => {
    const r = ok(await fetchFeed(server.url(`/files/rdf.xml?encoding=${encoding}`), NO_VALIDATORS, OPTS));
    expect(Buffer.from(r.body).equals(fileBytes('rdf.xml'))).toBe(true);
  });
  it('a runtime feed served with br (chosen from our Accept-Encoding) parses', async () => {
    server.setFeed('/br.json', { format: 'json', items: [{ id: 'j', title: 'Brotli news' }], encoding: 'auto' });
    const r = ok(await fetchFeed(server.url('/br.json'), NO_VALIDATORS, OPTS));
    expect(parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl }).items[0]!.title).toBe('Brotli news');
  });
});

describe('redirects are followed by hand, up to the cap', () => {
  it('follows a chain within the cap and reports the final URL', async () => {
    const r = ok(await fetchFeed(server.url('/redirect/3/files/atom.xml'), NO_VALIDATORS, OPTS));
    expect(r.finalUrl).toBe(server.url('/files/atom.xml'));
    expect(Buffer.from(r.body).equals(fileBytes('atom.xml'))).toBe(true);
  });
  it('follows a relative Location', async () => {
    const r = ok(await fetchFeed(server.url('/redirect-relative/files/feed.json'), NO_VALIDATORS, OPTS));
    expect(r.finalUrl).toBe(server.url('/files/feed.json'));
  });
  it('fails beyond the cap', async () => {
    const r = failed(
      await fetchFeed(server.url('/redirect/4/files/atom.xml'), NO_VALIDATORS, { ...OPTS, maxRedirects: 3 }),
    );
    expect(r.error).toBe('redirects');
    expect(r.message).toMatch(/more than 3 redirects/);
    expect(r.status).toBe(301); // the fourth answer, /redirect/1, is the one not followed
  });
  it('fails on a loop at once, without spending the cap', async () => {
    const before = server.hits('/loop/a').length + server.hits('/loop/b').length;
    const r = failed(await fetchFeed(server.url('/loop/a'), NO_VALIDATORS, { ...OPTS, maxRedirects: 50 }));
    expect(r.error).toBe('redirects');
    expect(r.message).toMatch(/loop/);
    expect(server.hits('/loop/a').length + server.hits('/loop/b').length - before).toBe(2);
  });
});

describe('timeouts: connect and total', () => {
  it('a connection that never gets up (DNS that never answers) times out on the connect timeout', async () => {
    const r = failed(
      await fetchFeed('http://feeds.never.example/rss', NO_VALIDATORS, {
        ...OPTS,
        connectTimeoutMs: 100,
        timeoutMs: 10_000,
        lookup: () => new Promise(() => {}),
      }),
    );
    expect(r.error).toBe('timeout');
    expect(r.message).toMatch(/connect/);
  });
  it('headers that do not come in time fail on the total timeout', async () => {
    const r = failed(await fetchFeed(server.url('/slow-headers?ms=5000'), NO_VALIDATORS, { ...OPTS, timeoutMs: 200 }));
    expect(r.error).toBe('timeout');
  });
  it('a body that trickles past the total timeout fails too', async () => {
    const r = failed(await fetchFeed(server.url('/slow-body?ms=5000'), NO_VALIDATORS, { ...OPTS, timeoutMs: 200 }));
    expect(r.error).toBe('timeout');
    expect(r.status).toBe(200);
  });
  it('a slow answer within the timeout is fine', async () => {
    ok(await fetchFeed(server.url('/slow-headers?ms=50'), NO_VALIDATORS, OPTS));
  });
  it('the caller can abort', async () => {
    const controller = new AbortController();
    const pending = fetchFeed(server.url('/slow-headers?ms=5000'), NO_VALIDATORS, {
      ...OPTS,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    const r = failed(await pending);
    expect(r.error).toBe('network');
    expect(r.message).toBe('aborted');
  });
});

describe('failing answers come back as errors, never as exceptions', () => {
  it('a 500', async () => {
    expect(await fetchFeed(server.url('/status/500'), NO_VALIDATORS, OPTS)).toEqual({
      kind: 'error',
      status: 500,
      message: 'HTTP 500 Internal Server Error',
      retryAfterMs: null,
      error: 'http',
    });
  });
  it('a 404 and a 410', async () => {
    expect(failed(await fetchFeed(server.url('/status/404'), NO_VALIDATORS, OPTS)).status).toBe(404);
    expect(failed(await fetchFeed(server.url('/status/410'), NO_VALIDATORS, OPTS)).status).toBe(410);
  });
  it('a connection reset before any answer', async () => {
    const r = failed(await fetchFeed(server.url('/reset'), NO_VALIDATORS, OPTS));
    expect(r).toMatchObject({ error: 'network', status: null });
  });
  it('a connection reset in the middle of the body', async () => {
    const r = failed(await fetchFeed(server.url('/reset-mid'), NO_VALIDATORS, OPTS));
    expect(r).toMatchObject({ error: 'network', status: 200 });
  });
  it('a refused connection', async () => {
    const closed = await startFixtureServer();
    const url = closed.url('/x');
    await closed.close();
    expect(failed(await fetchFeed(url, NO_VALIDATORS, OPTS)).error).toBe('network');
  });
});

describe('429 and 503 Retry-After is returned as retryAfterMs', () => {
  it('in seconds', async () => {
    const r = failed(await fetchFeed(server.url('/status/429?retry-after=120'), NO_VALIDATORS, OPTS));
    expect(r).toMatchObject({ status: 429, retryAfterMs: 120_000, error: 'http' });
  });
  it('as an HTTP date, measured from the injected clock', async () => {
    const at = 'Wed, 21 Oct 2026 07:28:00 GMT';
    const now = Date.parse(at) - 90_000;
    const r = failed(
      await fetchFeed(server.url(`/status/503?retry-after=${encodeURIComponent(at)}`), NO_VALIDATORS, {
        ...OPTS,
        now: () => now,
      }),
    );
    expect(r).toMatchObject({ status: 503, retryAfterMs: 90_000 });
  });
  it('not for other statuses, and not when unreadable', async () => {
    expect(
      failed(await fetchFeed(server.url('/status/500?retry-after=60'), NO_VALIDATORS, OPTS)).retryAfterMs,
    ).toBeNull();
    expect(
      failed(await fetchFeed(server.url('/status/429?retry-after=soon'), NO_VALIDATORS, OPTS)).retryAfterMs,
    ).toBeNull();
    expect(failed(await fetchFeed(server.url('/status/429'), NO_VALIDATORS, OPTS)).retryAfterMs).toBeNull();
  });
  it('parseRetryAfter reads the three HTTP date forms, and a past date as 0', () => {
    const now = Date.UTC(1994, 10, 6, 8, 49, 0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(37_000);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(37_000);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBe(37_000);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-5', now)).toBeNull();
  });
});

describe('Retry-After is read strictly and at most a day', () => {
  const now = Date.UTC(2026, 10, 24, 12, 0, 0);
  it('delay-seconds of any length: decimal digits only, a day at most', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('00000000000000000000120', now)).toBe(120_000);
    expect(parseRetryAfter('86400', now)).toBe(RETRY_AFTER_MAX_MS);
    expect(parseRetryAfter('86401', now)).toBe(RETRY_AFTER_MAX_MS);
    expect(parseRetryAfter('99999999999999999999', now)).toBe(RETRY_AFTER_MAX_MS);
    expect(parseRetryAfter('9'.repeat(400), now)).toBe(RETRY_AFTER_MAX_MS);
  });
  it('hex, exponent, fraction, sign and inner spaces are unreadable (null), not numbers', () => {
    for (const v of ['0x10', '1e3', '1.5', '+5', '-5', '1 0', '١٢٠', 'Infinity', ''])
      expect(parseRetryAfter(v, now), v).toBeNull();
  });
  it('a far-future HTTP date is a day; a date in another shape than the three HTTP forms is unreadable', () => {
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', now)).toBe(RETRY_AFTER_MAX_MS);
    expect(parseRetryAfter('Sun, 2 3 4', now)).toBeNull();
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994 extra', now)).toBeNull();
    expect(parseRetryAfter('Sun Feb 30 08:49:37 1994', now)).toBeNull();
  });
});

describe('text the server controls is kept in the error, bounded', () => {
  it('a long reason phrase is cut to 100 characters', async () => {
    server.route('/long-reason', (_req, res) => {
      res.writeHead(503, `Busy ${'z'.repeat(5000)}`, { 'content-type': 'text/plain' });
      res.end('busy');
    });
    const r = failed(await fetchFeed(server.url('/long-reason'), NO_VALIDATORS, OPTS));
    expect(r.message).toMatch(/^HTTP 503 Busy z+…$/);
    expect(r.message.length).toBe('HTTP 503 '.length + 100);
  });
  it('a long redirect target and an unknown Content-Encoding are bounded too', async () => {
    server.route('/long-location', (_req, res) => {
      res.writeHead(302, { location: `ftp${'x'.repeat(5000)}://elsewhere/` }).end();
    });
    server.route('/odd-encoding', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rss+xml', 'content-encoding': 'q'.repeat(5000) }).end('<rss/>');
    });
    expect(failed(await fetchFeed(server.url('/long-location'), NO_VALIDATORS, OPTS)).message.length).toBeLessThan(100);
    expect(failed(await fetchFeed(server.url('/odd-encoding'), NO_VALIDATORS, OPTS)).message.length).toBeLessThan(100);
  });
});

describe('the body cap is enforced while streaming', () => {
  it('an oversized chunked body is cut off', async () => {
    const r = failed(
      await fetchFeed(server.url('/huge?bytes=5000000'), NO_VALIDATORS, { ...OPTS, maxBytes: 1_000_000 }),
    );
    expect(r).toMatchObject({ error: 'too-large', status: 200 });
  });
  it('an oversized Content-Length is refused before reading', async () => {
    const r = failed(
      await fetchFeed(server.url('/huge?bytes=5000000&length=1'), NO_VALIDATORS, { ...OPTS, maxBytes: 1_000_000 }),
    );
    expect(r.error).toBe('too-large');
    expect(r.message).toMatch(/5000000/);
  });
  it.each(['gzip', 'br'] as const)(
    'a small %s body that decodes past the cap (a compression bomb)',
    async (encoding) => {
      const r = failed(
        await fetchFeed(server.url(`/huge?bytes=5000000&encoding=${encoding}`), NO_VALIDATORS, {
          ...OPTS,
          maxBytes: 1_000_000,
        }),
      );
      expect(r.error).toBe('too-large');
    },
  );
  it('a body under the cap passes', async () => {
    const r = ok(await fetchFeed(server.url('/huge?bytes=900000'), NO_VALIDATORS, { ...OPTS, maxBytes: 1_000_000 }));
    expect(r.body.length).toBe(900_000);
  });
});

describe('what arrives broken is reported by parseFeed', () => {
  it('malformed XML is a parse error', async () => {
    const r = ok(await fetchFeed(server.url('/files/malformed.xml'), NO_VALIDATORS, OPTS));
    expect(() => parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl })).toThrow(
      expect.objectContaining({ kind: 'parse' }),
    );
  });
  it('a wrong charset in the Content-Type (says UTF-8, sends Windows-1252) still reads right', async () => {
    const ct = encodeURIComponent('application/rss+xml; charset=utf-8');
    const r = ok(await fetchFeed(server.url(`/files/cp1252-undeclared.xml?ct=${ct}`), NO_VALIDATORS, OPTS));
    expect(parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl }).items[0]!.title).toBe(
      'Café “crème” €3',
    );
  });
  it('a wrong charset in the Content-Type (says ISO-8859-1, sends UTF-8) still reads right', async () => {
    const ct = encodeURIComponent('text/xml; charset=iso-8859-1');
    const r = ok(await fetchFeed(server.url(`/files/rss2.xml?ct=${ct}`), NO_VALIDATORS, OPTS));
    expect(parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl }).items[0]!.summary).toBe(
      'The Federal Reserve held rates at 5.25–5.5%. Markets rallied.',
    );
  });
  it('relative links resolve against the final URL after redirects', async () => {
    const r = ok(await fetchFeed(server.url('/redirect/2/files/feed.json'), NO_VALIDATORS, OPTS));
    expect(parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl }).items[1]!.url).toBe(
      server.url('/posts/2'),
    );
  });
});

describe('the fixture server serves every format at runtime', () => {
  it.each(['rss', 'rdf', 'atom', 'json'] as const)('%s, gaining items between polls', async (format) => {
    const p = `/live-${format}`;
    server.setFeed(p, {
      format,
      title: `Live ${format}`,
      items: [{ id: `${format}-1`, title: 'One', link: '/one', published: Date.UTC(2025, 5, 1) }],
    });
    const a = ok(await fetchFeed(server.url(p), NO_VALIDATORS, OPTS));
    server.addItems(p, { id: `${format}-2`, title: 'Two', link: '/two', published: Date.UTC(2025, 5, 2) });
    const b = ok(await fetchFeed(server.url(p), a.validators, OPTS));
    const feed = parseFeed(b.body, { contentType: b.contentType, baseUrl: b.finalUrl });
    expect(feed.format).toBe(format);
    expect(feed.items.map((i) => [i.guid, i.title, i.url])).toEqual([
      [`${format}-2`, 'Two', server.url('/two')],
      [`${format}-1`, 'One', server.url('/one')],
    ]);
  });
});

describe('feeds under the address rules: no private, loopback or link-local hop without FEED_ALLOW_PRIVATE', () => {
  const STRICT: FetchOptions = { ...OPTS, allowPrivate: false };
  /** The fixture server (127.0.0.1) standing in for a public feed host; every other address judged as usual. */
  const fixtureIsPublic = (address: string): string | null =>
    address === '127.0.0.1' ? null : nonPublicReason(address);

  let internal: http.Server;
  let internalHits = 0;
  let internalUrl = '';
  beforeAll(async () => {
    // A second loopback address: the "internal" service a redirect must not reach.
    internal = http.createServer((_req, res) => {
      internalHits++;
      res
        .writeHead(200, { 'content-type': 'application/rss+xml' })
        .end(readFileSync(path.join(FEED_FIXTURES, 'rss2.xml')));
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.2', resolve));
    internalUrl = `http://127.0.0.2:${(internal.address() as AddressInfo).port}/metadata`;
    server.route('/to-internal', (_req, res) => void res.writeHead(302, { location: internalUrl }).end());
  });
  afterAll(() => new Promise<void>((resolve) => internal.close(() => resolve())));

  it('a feed on a loopback address is refused before any request, naming the address and its class', async () => {
    const before = server.hits('/files/rss2.xml').length;
    const r = failed(await fetchFeed(server.url('/files/rss2.xml'), NO_VALIDATORS, STRICT));
    expect(r).toMatchObject({ error: 'refused', status: null, retryAfterMs: null });
    expect(r.message).toBe(
      '127.0.0.1 is a loopback address (127.0.0.0/8); feeds on private, loopback or link-local addresses are polled only with FEED_ALLOW_PRIVATE=true',
    );
    expect(server.hits('/files/rss2.xml').length).toBe(before);
  });

  it('a host name resolving to a private address is refused (every address it resolves to is checked)', async () => {
    const lookup = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    const r = failed(await fetchFeed('http://feeds.partner.example/rss', NO_VALIDATORS, { ...STRICT, lookup }));
    expect(r.error).toBe('refused');
    expect(r.message).toMatch(/^feeds\.partner\.example resolves to 10\.1\.2\.3, a private address \(10\.0\.0\.0\/8\)/);
  });

  it.each([
    ['[::127.0.0.1]', /IPv4-compatible/],
    ['[::ffff:0:127.0.0.1]', /IPv4-translated/],
    ['[::ffff:7f00:1]', /IPv4-mapped .* of 127\.0\.0\.1, a loopback/],
    ['[2002:7f00:0001::]', /6to4 .* of 127\.0\.0\.1, a loopback/],
    ['[fec0::1]', /site-local/],
    ['[64:ff9b::a9fe:a9fe]', /NAT64 .* of 169\.254\.169\.254, a link-local/],
    ['169.254.169.254', /link-local/],
  ])('a literal %s is refused', async (host, names) => {
    const r = failed(
      await fetchFeed(`http://${host}:${new URL(server.url('/')).port}/files/rss2.xml`, NO_VALIDATORS, STRICT),
    );
    expect(r.error).toBe('refused');
    expect(r.message).toMatch(names);
  });

  it('a redirect to an internal address is refused, and nothing is requested from it', async () => {
    const r = failed(
      await fetchFeed(server.url('/to-internal'), NO_VALIDATORS, { ...STRICT, nonPublicReason: fixtureIsPublic }),
    );
    expect(r).toMatchObject({ error: 'refused', status: 302 });
    expect(r.message).toBe(
      `redirect to ${internalUrl}: 127.0.0.2 is a loopback address (127.0.0.0/8); feeds on private, loopback or link-local addresses are polled only with FEED_ALLOW_PRIVATE=true`,
    );
    expect(internalHits).toBe(0);
  });

  it('with FEED_ALLOW_PRIVATE the same redirect is followed', async () => {
    const r = ok(await fetchFeed(server.url('/to-internal'), NO_VALIDATORS, OPTS));
    expect(r.finalUrl).toBe(internalUrl);
    expect(internalHits).toBe(1);
  });

  it('each hop connects to the address checked: the name is resolved once, a second answer is never asked for', async () => {
    const answers: string[] = [];
    // A rebinding resolver: public (the fixture, here) the first time, an internal address after.
    const lookup = async (host: string) => {
      answers.push(host);
      return [{ address: answers.length === 1 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    };
    const port = new URL(server.url('/')).port;
    const r = ok(
      await fetchFeed(`http://feeds.partner.example:${port}/files/rss2.xml`, NO_VALIDATORS, {
        ...STRICT,
        lookup,
        nonPublicReason: fixtureIsPublic,
      }),
    );
    expect(r.status).toBe(200);
    expect(answers).toEqual(['feeds.partner.example']);
  });
});
