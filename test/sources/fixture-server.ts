/**
 * A loopback HTTP server that plays feed publishers, good and bad, for the feed and poller tests.
 *
 * Feeds you define at runtime (`setFeed`, `addItems`) are rendered as RSS 2.0, RSS 1.0/RDF, Atom 1.0 or
 * JSON Feed 1.1, with an ETag and Last-Modified that change only when the feed changes (conditional
 * requests get a 304), compressed with br or gzip when the client accepts it (or forced per feed).
 *
 * Fixed routes for the bad days:
 * - `/files/<name>`: a file of test/fixtures/feeds/ as stored (`?ct=` sets the Content-Type,
 *   `?encoding=gzip|br` compresses it; the Content-Type otherwise follows the extension, no charset).
 * - `/redirect/<n>/<path>`: n hops of 302 (the last one 301) to `/<path>`; `/loop/a` and `/loop/b` redirect
 *   to each other; `/redirect-relative/<path>` answers with a relative Location.
 * - `/slow-headers?ms=N[&then=/path]`: headers after N ms; `/slow-body?ms=N`: half the body, N ms, the rest.
 * - `/status/<code>[?retry-after=<value>]`: that status with a short body (and Retry-After when given).
 * - `/reset`: the connection is destroyed before any answer; `/reset-mid`: after the headers and some body.
 * - `/huge?bytes=N[&length=1][&encoding=gzip|br]`: an N-byte RSS-looking body, chunked unless `length=1`
 *   (then with a Content-Length); with an encoding the wire bytes are small and the decoded ones N.
 * Any route can be replaced or added with `route(path, handler)`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

export const FEED_FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/feeds');

export type FixtureFormat = 'rss' | 'rdf' | 'atom' | 'json';

export interface FixtureItem {
  /**
   * guid / id; omitted from the document when null (RSS, JSON keep no id then; Atom and RDF need one and use the link).
   */
  id?: string | null;
  title?: string | null;
  summary?: string | null;
  /** Absolute or relative link. */
  link?: string | null;
  /** Date or epoch ms; omitted when null. */
  published?: Date | number | null;
}

export interface FeedSpec {
  format: FixtureFormat;
  title?: string;
  /** Newest first, as feeds list them. */
  items: FixtureItem[];
  /** RSS <ttl> in minutes. */
  ttlMinutes?: number;
  /** sy:updatePeriod / sy:updateFrequency (RSS, RDF, Atom). */
  syndication?: { period: 'hourly' | 'daily' | 'weekly' | 'monthly' | 'yearly'; frequency?: number };
  /** `auto` (default) compresses per Accept-Encoding (br, then gzip); the others force it. */
  encoding?: 'auto' | 'identity' | 'gzip' | 'br';
  /** Serve without ETag / Last-Modified, so no conditional request can match. */
  noValidators?: boolean;
  /** Keep at most this many items in the document (the oldest drop off, as real feeds do). */
  maxItems?: number;
}

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  status: number;
}

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void;

export interface FixtureServer {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  url(pathAndQuery: string): string;
  /** Creates or replaces the feed served at `path`. */
  setFeed(path: string, spec: FeedSpec): void;
  /** Prepends items (newest first) to the feed at `path`; the validators change. */
  addItems(path: string, ...items: FixtureItem[]): void;
  /** Replaces the items of the feed at `path`. */
  setItems(path: string, items: FixtureItem[]): void;
  removeFeed(path: string): void;
  /** A custom handler for an exact path (checked before everything else). */
  route(path: string, handler: RouteHandler): void;
  /** Every request seen, in order. */
  readonly requests: RecordedRequest[];
  /** Requests to `path` (without query). */
  hits(path: string): RecordedRequest[];
  close(): Promise<void>;
}

const xml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function toDate(d: Date | number): Date {
  return typeof d === 'number' ? new Date(d) : d;
}

function tag(name: string, value: string | null | undefined): string {
  return value == null ? '' : `<${name}>${xml(value)}</${name}>`;
}

function syndication(spec: FeedSpec): string {
  if (!spec.syndication) return '';
  return (
    `<sy:updatePeriod>${spec.syndication.period}</sy:updatePeriod>` +
    (spec.syndication.frequency !== undefined
      ? `<sy:updateFrequency>${spec.syndication.frequency}</sy:updateFrequency>`
      : '')
  );
}

const SY = 'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"';

/** The document for a feed spec, and its Content-Type. */
export function renderFeed(spec: FeedSpec, selfUrl: string): { body: string; contentType: string } {
  const title = spec.title ?? 'Fixture feed';
  const items = spec.maxItems !== undefined ? spec.items.slice(0, spec.maxItems) : spec.items;
  switch (spec.format) {
    case 'rss': {
      const entries = items.map(
        (i) =>
          '<item>' +
          tag('title', i.title) +
          tag('link', i.link) +
          tag('description', i.summary) +
          (i.id != null ? `<guid isPermaLink="false">${xml(i.id)}</guid>` : '') +
          (i.published != null ? tag('pubDate', toDate(i.published).toUTCString()) : '') +
          '</item>',
      );
      return {
        contentType: 'application/rss+xml; charset=utf-8',
        body:
          `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" ${SY}><channel>${tag('title', title)}` +
          `${tag('link', selfUrl)}<description>fixture</description>` +
          (spec.ttlMinutes !== undefined ? `<ttl>${spec.ttlMinutes}</ttl>` : '') +
          syndication(spec) +
          `${entries.join('\n')}</channel></rss>\n`,
      };
    }
    case 'rdf': {
      const entries = items.map((i) => {
        const about = i.id ?? i.link ?? '';
        return (
          `<item rdf:about="${xml(about)}">` +
          tag('title', i.title) +
          tag('link', i.link ?? about) +
          tag('description', i.summary) +
          (i.published != null ? tag('dc:date', toDate(i.published).toISOString()) : '') +
          '</item>'
        );
      });
      return {
        contentType: 'application/rdf+xml',
        body:
          `<?xml version="1.0" encoding="utf-8"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" ` +
          `xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" ${SY}>` +
          `<channel rdf:about="${xml(selfUrl)}">${tag('title', title)}${tag('link', selfUrl)}<description>fixture</description>` +
          `${syndication(spec)}</channel>${entries.join('\n')}</rdf:RDF>\n`,
      };
    }
    case 'atom': {
      const entries = items.map(
        (i) =>
          '<entry>' +
          tag('title', i.title) +
          (i.link != null ? `<link rel="alternate" href="${xml(i.link)}"/>` : '') +
          tag('id', i.id ?? i.link ?? null) +
          tag('summary', i.summary) +
          (i.published != null
            ? tag('published', toDate(i.published).toISOString()) + tag('updated', toDate(i.published).toISOString())
            : '') +
          '</entry>',
      );
      return {
        contentType: 'application/atom+xml',
        body:
          `<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" ${SY}>${tag('title', title)}` +
          `<id>${xml(selfUrl)}</id><updated>2025-01-01T00:00:00Z</updated><link rel="self" href="${xml(selfUrl)}"/>` +
          `${syndication(spec)}${entries.join('\n')}</feed>\n`,
      };
    }
    case 'json': {
      const doc = {
        version: 'https://jsonfeed.org/version/1.1',
        title,
        feed_url: selfUrl,
        items: items.map((i) => ({
          ...(i.id != null ? { id: i.id } : {}),
          ...(i.link != null ? { url: i.link } : {}),
          ...(i.title != null ? { title: i.title } : {}),
          ...(i.summary != null ? { summary: i.summary, content_text: i.summary } : { content_text: '' }),
          ...(i.published != null ? { date_published: toDate(i.published).toISOString() } : {}),
        })),
      };
      return { contentType: 'application/feed+json', body: JSON.stringify(doc) };
    }
  }
}

function contentTypeFor(file: string): string {
  if (file.endsWith('.json')) return 'application/feed+json';
  if (file.endsWith('.html')) return 'text/html';
  return 'application/xml';
}

function compress(body: Buffer, encoding: 'gzip' | 'br'): Buffer {
  return encoding === 'gzip' ? zlib.gzipSync(body) : zlib.brotliCompressSync(body);
}

function chooseEncoding(req: http.IncomingMessage, wanted: FeedSpec['encoding']): 'identity' | 'gzip' | 'br' {
  if (wanted === 'gzip' || wanted === 'br' || wanted === 'identity') return wanted;
  const accept = String(req.headers['accept-encoding'] ?? '');
  if (/\bbr\b/.test(accept)) return 'br';
  if (/\bgzip\b/.test(accept)) return 'gzip';
  return 'identity';
}

interface FeedState {
  spec: FeedSpec;
  etag: string;
  lastModified: string;
  version: number;
}

/** A fresh `Last-Modified` for each change, strictly increasing (HTTP dates have one-second resolution). */
function nextHttpDate(previous: string | null): string {
  const now = Math.floor(Date.now() / 1000) * 1000;
  const prev = previous ? Date.parse(previous) : 0;
  return new Date(Math.max(now, prev + 1000)).toUTCString();
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const feeds = new Map<string, FeedState>();
  const routes = new Map<string, RouteHandler>();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let origin = '';

  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const touch = (p: string, spec: FeedSpec): void => {
    const prev = feeds.get(p);
    const version = (prev?.version ?? 0) + 1;
    feeds.set(p, {
      spec,
      version,
      etag: `"${createHash('sha1')
        .update(`${p}#${version}#${JSON.stringify(spec)}`)
        .digest('hex')
        .slice(0, 16)}"`,
      lastModified: nextHttpDate(prev?.lastModified ?? null),
    });
  };

  const send = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    status: number,
    body: Buffer | string,
    headers: Record<string, string>,
    encoding: 'identity' | 'gzip' | 'br' = 'identity',
  ): void => {
    let bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    if (encoding !== 'identity') {
      bytes = compress(bytes, encoding);
      headers['content-encoding'] = encoding;
      headers.vary = 'Accept-Encoding';
    }
    res.writeHead(status, { ...headers, 'content-length': String(bytes.length) });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  };

  const serveFeed = (req: http.IncomingMessage, res: http.ServerResponse, url: URL, state: FeedState): void => {
    const { spec } = state;
    if (!spec.noValidators) {
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      const etagMatches =
        typeof inm === 'string' &&
        inm.split(',').some((t) => t.trim().replace(/^W\//, '') === state.etag || t.trim() === '*');
      const notModifiedSince =
        inm === undefined && typeof ims === 'string' && Date.parse(ims) >= Date.parse(state.lastModified);
      if (etagMatches || notModifiedSince) {
        res.writeHead(304, { etag: state.etag, 'last-modified': state.lastModified });
        res.end();
        return;
      }
    }
    const { body, contentType } = renderFeed(spec, `${origin}${url.pathname}`);
    const headers: Record<string, string> = { 'content-type': contentType };
    if (!spec.noValidators) {
      headers.etag = state.etag;
      headers['last-modified'] = state.lastModified;
    }
    send(req, res, 200, body, headers, chooseEncoding(req, spec.encoding));
  };

  const builtIn = (req: http.IncomingMessage, res: http.ServerResponse, url: URL): boolean => {
    const p = url.pathname;
    const q = url.searchParams;
    if (p.startsWith('/files/')) {
      const name = path.basename(decodeURIComponent(p.slice('/files/'.length)));
      let bytes: Buffer;
      try {
        bytes = readFileSync(path.join(FEED_FIXTURES, name));
      } catch {
        send(req, res, 404, 'no such fixture', { 'content-type': 'text/plain' });
        return true;
      }
      const encoding = q.get('encoding');
      send(
        req,
        res,
        200,
        bytes,
        { 'content-type': q.get('ct') ?? contentTypeFor(name) },
        encoding === 'gzip' || encoding === 'br' ? encoding : 'identity',
      );
      return true;
    }
    let m = /^\/redirect\/(\d+)(\/.*)$/.exec(p);
    if (m) {
      const n = Number(m[1]);
      const location = n <= 1 ? `${m[2]}${url.search}` : `/redirect/${n - 1}${m[2]}${url.search}`;
      res.writeHead(n <= 1 ? 301 : 302, { location: `${origin}${location}` });
      res.end();
      return true;
    }
    m = /^\/redirect-relative(\/.*)$/.exec(p);
    if (m) {
      // A path relative to this one that leads to /<path>: one "../" per directory level.
      res.writeHead(307, { location: `${'../'.repeat(p.split('/').length - 2)}${m[1]!.slice(1)}${url.search}` });
      res.end();
      return true;
    }
    if (p === '/loop/a' || p === '/loop/b') {
      res.writeHead(302, { location: p === '/loop/a' ? '/loop/b' : '/loop/a' });
      res.end();
      return true;
    }
    if (p === '/slow-headers') {
      const then = q.get('then');
      later(Number(q.get('ms') ?? 1000), () => {
        if (res.destroyed) return;
        if (then) {
          const target = new URL(then, origin);
          const state = feeds.get(target.pathname);
          if (state) return serveFeed(req, res, target, state);
        }
        send(req, res, 200, readFileSync(path.join(FEED_FIXTURES, 'rss2.xml')), {
          'content-type': 'application/rss+xml',
        });
      });
      return true;
    }
    if (p === '/slow-body') {
      const body = readFileSync(path.join(FEED_FIXTURES, 'rss2.xml'));
      res.writeHead(200, { 'content-type': 'application/rss+xml', 'content-length': String(body.length) });
      const half = Math.floor(body.length / 2);
      res.write(body.subarray(0, half));
      later(Number(q.get('ms') ?? 1000), () => {
        if (!res.destroyed) res.end(body.subarray(half));
      });
      return true;
    }
    m = /^\/status\/(\d{3})$/.exec(p);
    if (m) {
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      const ra = q.get('retry-after');
      if (ra !== null) headers['retry-after'] = ra;
      send(req, res, Number(m[1]), `status ${m[1]}`, headers);
      return true;
    }
    if (p === '/reset') {
      req.socket.destroy();
      return true;
    }
    if (p === '/reset-mid') {
      res.writeHead(200, { 'content-type': 'application/rss+xml', 'content-length': '100000' });
      res.write('<?xml version="1.0"?><rss version="2.0"><channel><title>cut</title>');
      later(20, () => req.socket.destroy());
      return true;
    }
    if (p === '/huge') {
      const size = Number(q.get('bytes') ?? 10_000_000);
      const head = '<?xml version="1.0"?><rss version="2.0"><channel><title>huge</title><description>';
      const tail = '</description></channel></rss>';
      const body = Buffer.alloc(Math.max(size, head.length + tail.length), 'x');
      body.write(head, 0);
      body.write(tail, body.length - tail.length);
      const encoding = q.get('encoding');
      if (encoding === 'gzip' || encoding === 'br') {
        send(req, res, 200, body, { 'content-type': 'application/rss+xml' }, encoding);
        return true;
      }
      const headers: Record<string, string> = { 'content-type': 'application/rss+xml' };
      if (q.get('length') === '1') headers['content-length'] = String(body.length);
      res.writeHead(200, headers);
      // Stream it in 64 KiB pieces so a client can stop early.
      let offset = 0;
      const pump = (): void => {
        while (offset < body.length && !res.destroyed) {
          const chunk = body.subarray(offset, offset + 65_536);
          offset += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
      return true;
    }
    return false;
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const record: RecordedRequest = { path: url.pathname, headers: req.headers, status: 0 };
    requests.push(record);
    res.on('finish', () => (record.status = res.statusCode));
    const custom = routes.get(url.pathname);
    if (custom) return custom(req, res, url);
    const state = feeds.get(url.pathname);
    if (state) return serveFeed(req, res, url, state);
    if (builtIn(req, res, url)) return;
    send(req, res, 404, 'not found', { 'content-type': 'text/plain' });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    url: (p) => `${origin}${p.startsWith('/') ? p : `/${p}`}`,
    setFeed: (p, spec) => touch(p, { ...spec, items: [...spec.items] }),
    addItems: (p, ...items) => {
      const state = feeds.get(p);
      if (!state) throw new Error(`no feed at ${p}`);
      touch(p, { ...state.spec, items: [...items, ...state.spec.items] });
    },
    setItems: (p, items) => {
      const state = feeds.get(p);
      if (!state) throw new Error(`no feed at ${p}`);
      touch(p, { ...state.spec, items: [...items] });
    },
    removeFeed: (p) => void feeds.delete(p),
    route: (p, handler) => void routes.set(p, handler),
    requests,
    hits: (p) => requests.filter((r) => r.path === p),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
