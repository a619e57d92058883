import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import { pipeline, Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import {
  AddressRefused,
  bareHost,
  pinnedLookup,
  resolveChecked,
  ResolveError,
  type Lookup,
  type ResolvedAddress,
} from '../../net/index.js';
import { parseAsctime, parseRfc822 } from './dates.js';
import { bounded, FeedError, MESSAGE_MAX, type FeedErrorKind } from './errors.js';
import { readDecimal } from './numbers.js';

export interface FetchOptions {
  /** Sent as User-Agent; names the service (and ideally a contact URL). */
  userAgent: string;
  /** DNS + TCP (+ TLS) of each new connection. */
  connectTimeoutMs: number;
  /** The whole fetch, redirects and body included. */
  timeoutMs: number;
  /** Cap on the body, compressed and decompressed; enforced while streaming. */
  maxBytes: number;
  /** Redirects followed at most (a loop fails at once). */
  maxRedirects: number;
  signal?: AbortSignal;
  /** Clock for Retry-After dates (epoch ms); Date.now by default. */
  now?: () => number;
  /** Non-public addresses may be polled (FEED_ALLOW_PRIVATE); by default a hop to one is `refused`, unrequested. */
  allowPrivate?: boolean;
  /** Resolves a host to all its addresses (the system resolver by default); the connection goes only to those. */
  lookup?: Lookup;
  /** Why an address is not public, or null (src/net's rule by default; a test seam). */
  nonPublicReason?: (address: string) => string | null;
}

export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export type FetchResult =
  | {
      kind: 'ok';
      status: number;
      body: Uint8Array;
      contentType: string | null;
      validators: Validators;
      finalUrl: string;
    }
  | { kind: 'not-modified'; status: 304; validators: Validators }
  | { kind: 'error'; status: number | null; message: string; retryAfterMs: number | null; error: FeedErrorKind };

const ACCEPT =
  'application/rss+xml, application/atom+xml, application/rdf+xml, application/feed+json, ' +
  'application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.5';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function header(res: IncomingMessage, name: string): string | null {
  const v = res.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? null : s.trim();
}

/** The longest Retry-After read (a day); a longer one is read as this. */
export const RETRY_AFTER_MAX_MS = 86_400_000;

/** Retry-After (RFC 9110 §10.2.3), seconds or an HTTP-date, as ms from `now` in [0, RETRY_AFTER_MAX_MS], or null. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value == null) return null;
  const v = value.trim();
  // Decimal seconds, any number of digits (a longer wait reads as the maximum).
  const seconds = readDecimal(v, 0, RETRY_AFTER_MAX_MS / 1000);
  if (seconds !== null) return seconds * 1000;
  const at = parseRfc822(v) ?? parseAsctime(v);
  if (at === undefined || !Number.isFinite(at)) return null;
  return Math.min(Math.max(0, at - now), RETRY_AFTER_MAX_MS);
}

function fail(
  kind: FeedErrorKind,
  message: string,
  status: number | null = null,
  retryAfterMs: number | null = null,
): FetchResult {
  return { kind: 'error', status, message: bounded(message, MESSAGE_MAX), retryAfterMs, error: kind };
}

function requestOnce(
  target: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
  connectTimeoutMs: number,
  lookup: LookupFunction,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const secure = target.protocol === 'https:';
    const mod = secure ? https : http;
    let connectTimer: NodeJS.Timeout | undefined;
    const req = mod.request(target, { method: 'GET', headers, signal, lookup }, (res) => {
      clearTimeout(connectTimer);
      resolve(res);
    });
    req.on('socket', (socket) => {
      if (!socket.connecting) return; // a kept-alive connection, already up
      connectTimer = setTimeout(() => {
        req.destroy(new FeedError('timeout', `connect timed out after ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    req.on('error', (err) => {
      clearTimeout(connectTimer);
      reject(err);
    });
    req.on('close', () => clearTimeout(connectTimer));
    req.end();
  });
}

async function readBody(res: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  const encoding = (header(res, 'content-encoding') ?? 'identity').toLowerCase();
  // Decimal digits only (any number of them: too many is over any cap); another spelling is not read.
  const declared = header(res, 'content-length');
  const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : Number.NaN;
  if (length > maxBytes) {
    res.destroy();
    throw new FeedError('too-large', `body of ${bounded(declared!, 40)} bytes is over the ${maxBytes}-byte cap`);
  }
  let decoder: zlib.Unzip | zlib.BrotliDecompress | null = null;
  if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate') decoder = zlib.createUnzip();
  else if (encoding === 'br') decoder = zlib.createBrotliDecompress();
  else if (encoding !== 'identity') {
    res.destroy();
    throw new FeedError('http', `unsupported Content-Encoding "${bounded(encoding, 40)}"`);
  }
  // The bytes on the wire count against the cap too (a compressed body is checked before decoding).
  let raw = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      raw += chunk.length;
      if (raw > maxBytes) callback(new FeedError('too-large', `body is over the ${maxBytes}-byte cap`));
      else callback(null, chunk);
    },
  });
  const noop = (): void => {};
  const source: Readable = decoder ? pipeline(res, counter, decoder, noop) : pipeline(res, counter, noop);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new FeedError('too-large', `body is over the ${maxBytes}-byte cap (decoded)`);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof FeedError) throw err;
    if (decoder && (err as NodeJS.ErrnoException).code?.startsWith('Z_')) {
      throw new FeedError('network', `could not decode the ${encoding} body: ${(err as Error).message}`);
    }
    throw err;
  } finally {
    res.destroy();
  }
  const body = Buffer.concat(chunks, total);
  return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
}

function networkMessage(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const text = e?.message ?? String(err);
  return bounded(e?.code && !text.includes(e.code) ? `${e.code}: ${text}` : text, 300);
}

/** The longest reason phrase and URL kept in an error message (both are the server's text). */
const REASON_MAX = 100;
const URL_MAX = 200;

/** One hop's addresses, resolved within the connect timeout and each checked unless `allowPrivate` (src/net). */
function resolveHop(
  target: URL,
  redirected: boolean,
  opts: FetchOptions,
  signal: AbortSignal,
): Promise<ResolvedAddress[]> {
  return new Promise((resolve, reject) => {
    const settle = (then: () => void): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      then();
    };
    const onAbort = (): void => settle(() => reject(signal.reason));
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(new FeedError('timeout', `connect timed out after ${opts.connectTimeoutMs} ms (no DNS answer)`)),
        ),
      opts.connectTimeoutMs,
    );
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    resolveChecked(bareHost(target), opts.allowPrivate === true, opts.lookup, opts.nonPublicReason).then(
      (addresses) => settle(() => resolve(addresses)),
      (e: unknown) => settle(() => reject(hopError(e, target, redirected))),
    );
  });
}

/** A failed resolution as a FeedError: `refused` for a non-public address, `network` when DNS failed. */
function hopError(e: unknown, target: URL, redirected: boolean): unknown {
  if (e instanceof ResolveError) return new FeedError('network', networkMessage(e));
  if (!(e instanceof AddressRefused)) return e;
  const hop = redirected ? `redirect to ${bounded(target.href, URL_MAX)}: ` : '';
  return new FeedError(
    'refused',
    `${hop}${e.message}; feeds on private, loopback or link-local addresses are polled only with FEED_ALLOW_PRIVATE=true`,
  );
}

/** Where a redirect leads (a URL), or why it is refused (the failure). */
function redirectTarget(
  location: string,
  from: URL,
  seen: ReadonlySet<string>,
  redirects: number,
  maxRedirects: number,
  status: number,
): URL | FetchResult {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return fail('redirects', `redirect to an invalid URL: ${bounded(location, URL_MAX)}`, status);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:')
    return fail('redirects', `redirect to ${bounded(next.protocol, 40)} refused`, status);
  next.hash = '';
  if (seen.has(next.href)) return fail('redirects', `redirect loop at ${bounded(next.href, URL_MAX)}`, status);
  if (redirects >= maxRedirects) return fail('redirects', `more than ${maxRedirects} redirects`, status);
  return next;
}

/** The answer of the last hop: not modified, an HTTP failure (with Retry-After on 429/503), or the body. */
async function finalAnswer(
  res: IncomingMessage,
  status: number,
  target: URL,
  validators: Validators,
  opts: FetchOptions,
  now: number,
): Promise<FetchResult> {
  if (status === 304) {
    res.destroy();
    return {
      kind: 'not-modified',
      status: 304,
      validators: {
        etag: header(res, 'etag') ?? validators.etag,
        lastModified: header(res, 'last-modified') ?? validators.lastModified,
      },
    };
  }
  if (status < 200 || status > 299) {
    res.destroy();
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(header(res, 'retry-after'), now) : null;
    return fail(
      'http',
      `HTTP ${status}${res.statusMessage ? ` ${bounded(res.statusMessage, REASON_MAX)}` : ''}`,
      status,
      retryAfterMs,
    );
  }
  const body = await readBody(res, opts.maxBytes);
  return {
    kind: 'ok',
    status,
    body,
    contentType: header(res, 'content-type'),
    validators: { etag: header(res, 'etag'), lastModified: header(res, 'last-modified') },
    finalUrl: target.href,
  };
}

/**
 * GET a feed politely: conditional, compressed, timed out, body capped while streaming, redirects followed by hand.
 * Each hop connects only to addresses resolved and checked first, so neither a redirect nor a second DNS answer
 * can lead inside the network (SSRF). HTTP and network failures come back as `kind: 'error'`, never thrown.
 */
export async function fetchFeed(url: string, validators: Validators, opts: FetchOptions): Promise<FetchResult> {
  const now = opts.now ?? Date.now;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return fail('network', `invalid URL: ${bounded(url, URL_MAX)}`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    return fail('network', `unsupported URL scheme ${bounded(target.protocol, 40)}`);

  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.timeoutMs);
  const onCallerAbort = (): void => controller.abort();
  if (opts.signal?.aborted) controller.abort();
  opts.signal?.addEventListener('abort', onCallerAbort, { once: true });

  const headers: Record<string, string> = {
    'user-agent': opts.userAgent,
    accept: ACCEPT,
    'accept-encoding': 'gzip, deflate, br',
  };
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;

  const seen = new Set<string>([target.href]);
  let redirects = 0;
  let lastStatus: number | null = null;
  try {
    for (;;) {
      const started = performance.now();
      const addresses = await resolveHop(target, redirects > 0, opts, controller.signal);
      const connectLeft = Math.max(1, Math.round(opts.connectTimeoutMs - (performance.now() - started)));
      const res = await requestOnce(target, headers, controller.signal, connectLeft, pinnedLookup(addresses));
      const status = res.statusCode ?? 0;
      lastStatus = status;
      const location = header(res, 'location');
      if (REDIRECTS.has(status) && location !== null) {
        res.destroy();
        const next = redirectTarget(location, target, seen, redirects, opts.maxRedirects, status);
        if (!(next instanceof URL)) return next;
        redirects++;
        seen.add(next.href);
        target = next;
        continue;
      }
      return await finalAnswer(res, status, target, validators, opts, now());
    }
  } catch (err) {
    if (timedOut) return fail('timeout', `no complete answer within ${opts.timeoutMs} ms`, lastStatus);
    if (err instanceof FeedError) return fail(err.kind, err.message, lastStatus);
    if (opts.signal?.aborted) return fail('network', 'aborted', lastStatus);
    return fail('network', networkMessage(err), lastStatus);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onCallerAbort);
  }
}
