import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFeed, parseFeed, parseRetryAfter, type FetchOptions, type FetchResult } from '../../../src/sources/feed/index.js';
import { FEED_FIXTURES, startFixtureServer, type FixtureServer } from '../fixture-server.js';

const NO_VALIDATORS = { etag: null, lastModified: null };
const OPTS: FetchOptions = {
  userAgent: 'fns-test/1.0 (+https://fns.example/bot)',
  connectTimeoutMs: 2_000,
  timeoutMs: 5_000,
  maxBytes: 1_000_000,
  maxRedirects: 5,
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
  it('sends the caller\'s User-Agent, asks for feeds and for compression', async () => {
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
    server.setFeed('/cond.xml', { format: 'rss', items: [{ id: 'a', title: 'First story', link: '/a', published: Date.UTC(2025, 0, 1) }] });
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
    const r = await fetchFeed(server.url('/cond-lm.xml'), { etag: null, lastModified: first.validators.lastModified }, OPTS);
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
    const r = failed(await fetchFeed(server.url('/redirect/4/files/atom.xml'), NO_VALIDATORS, { ...OPTS, maxRedirects: 3 }));
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
    const r = failed(await fetchFeed('http://feeds.never.example/rss', NO_VALIDATORS, {
      ...OPTS, connectTimeoutMs: 100, timeoutMs: 10_000, lookup: () => {},
    }));
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
    const pending = fetchFeed(server.url('/slow-headers?ms=5000'), NO_VALIDATORS, { ...OPTS, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const r = failed(await pending);
    expect(r.error).toBe('network');
    expect(r.message).toBe('aborted');
  });
});

describe('failing answers come back as errors, never as exceptions', () => {
  it('a 500', async () => {
    expect(await fetchFeed(server.url('/status/500'), NO_VALIDATORS, OPTS)).toEqual({
      kind: 'error', status: 500, message: 'HTTP 500 Internal Server Error', retryAfterMs: null, error: 'http',
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
    const r = failed(await fetchFeed(server.url(`/status/503?retry-after=${encodeURIComponent(at)}`), NO_VALIDATORS, { ...OPTS, now: () => now }));
    expect(r).toMatchObject({ status: 503, retryAfterMs: 90_000 });
  });
  it('not for other statuses, and not when unreadable', async () => {
    expect(failed(await fetchFeed(server.url('/status/500?retry-after=60'), NO_VALIDATORS, OPTS)).retryAfterMs).toBeNull();
    expect(failed(await fetchFeed(server.url('/status/429?retry-after=soon'), NO_VALIDATORS, OPTS)).retryAfterMs).toBeNull();
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

describe('the body cap is enforced while streaming', () => {
  it('an oversized chunked body is cut off', async () => {
    const r = failed(await fetchFeed(server.url('/huge?bytes=5000000'), NO_VALIDATORS, { ...OPTS, maxBytes: 1_000_000 }));
    expect(r).toMatchObject({ error: 'too-large', status: 200 });
  });
  it('an oversized Content-Length is refused before reading', async () => {
    const r = failed(await fetchFeed(server.url('/huge?bytes=5000000&length=1'), NO_VALIDATORS, { ...OPTS, maxBytes: 1_000_000 }));
    expect(r.error).toBe('too-large');
    expect(r.message).toMatch(/5000000/);
  });
  it.each(['gzip', 'br'] as const)('a small %s body that decodes past the cap (a compression bomb)', async (encoding) => {
    const r = failed(await fetchFeed(server.url(`/huge?bytes=5000000&encoding=${encoding}`), NO_VALIDATORS, { ...OPTS, maxBytes: 1_000_000 }));
    expect(r.error).toBe('too-large');
  });
  it('a body under the cap passes', async () => {
    const r = ok(await fetchFeed(server.url('/huge?bytes=900000'), NO_VALIDATORS, { ...OPTS, maxBytes: 1_000_000 }));
    expect(r.body.length).toBe(900_000);
  });
});

describe('what arrives broken is reported by parseFeed', () => {
  it('malformed XML is a parse error', async () => {
    const r = ok(await fetchFeed(server.url('/files/malformed.xml'), NO_VALIDATORS, OPTS));
    expect(() => parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl })).toThrow(expect.objectContaining({ kind: 'parse' }));
  });
  it('a wrong charset in the Content-Type (says UTF-8, sends Windows-1252) still reads right', async () => {
    const ct = encodeURIComponent('application/rss+xml; charset=utf-8');
    const r = ok(await fetchFeed(server.url(`/files/cp1252-undeclared.xml?ct=${ct}`), NO_VALIDATORS, OPTS));
    expect(parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl }).items[0]!.title).toBe('Café “crème” €3');
  });
  it('a wrong charset in the Content-Type (says ISO-8859-1, sends UTF-8) still reads right', async () => {
    const ct = encodeURIComponent('text/xml; charset=iso-8859-1');
    const r = ok(await fetchFeed(server.url(`/files/rss2.xml?ct=${ct}`), NO_VALIDATORS, OPTS));
    expect(parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl }).items[0]!.summary).toBe('The Federal Reserve held rates at 5.25–5.5%. Markets rallied.');
  });
  it('relative links resolve against the final URL after redirects', async () => {
    const r = ok(await fetchFeed(server.url('/redirect/2/files/feed.json'), NO_VALIDATORS, OPTS));
    expect(parseFeed(r.body, { contentType: r.contentType, baseUrl: r.finalUrl }).items[1]!.url).toBe(server.url('/posts/2'));
  });
});

describe('the fixture server serves every format at runtime', () => {
  it.each(['rss', 'rdf', 'atom', 'json'] as const)('%s, gaining items between polls', async (format) => {
    const p = `/live-${format}`;
    server.setFeed(p, { format, title: `Live ${format}`, items: [{ id: `${format}-1`, title: 'One', link: '/one', published: Date.UTC(2025, 5, 1) }] });
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
