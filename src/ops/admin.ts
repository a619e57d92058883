/**
 * The admin listener (ADMIN_PORT, loopback by default), outside the partner contract: `GET /healthz`, `/readyz`
 * (every check in parallel, each bounded; 503 naming the failed ones and why), `/metrics` (Prometheus text), and
 * `POST /admin/v1/articles` (push.ts, docs/sources.md) with `Authorization: Bearer <ADMIN_TOKEN>`, 404 when unset.
 */
import { errorText, type Log } from '../domain/log.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { limits } from '../contract/index.js';
import { admit } from '../domain/rate-limit.js';
import { isDependencyUnavailable } from '../http/unavailable.js';
import type { SourceStore } from '../store/ports/index.js';
import type { Metrics } from './metrics.js';
import { bearerToken, PUSH_MAX_BYTES, PushBodyError, pushArticles, tokenMatches, type PushFormat } from './push.js';

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency is usable; throws (or takes too long) when it is not. */
  check(): Promise<void>;
}

export interface AdminOptions {
  port: number;
  /** Default 127.0.0.1: the admin listener is for the machine (or a sidecar), not the internet. */
  host?: string;
  checks: ReadinessCheck[];
  metrics: Metrics;
  log: Log;
  /** Bound on each readiness check. Default 2000 ms. */
  checkTimeoutMs?: number;
  /** POST /admin/v1/articles; without a `token` (ADMIN_TOKEN unset) the endpoint is off (404). */
  push?: { token?: string; store: Pick<SourceStore, 'ingestItems'>; clock: () => number; maxBytes?: number };
  /** After a push stored articles: wake the stream's feed reader at once. */
  onArticlesStored?: (ids: string[]) => void;
  /** The clock of the refused-token window. Default Date.now. */
  clock?: () => number;
  /** Refused operator tokens allowed per client address. Default ADMIN_TOKEN_ATTEMPTS. */
  tokenAttempts?: TokenAttemptRules;
  /** Head and body must arrive within this (default 10 s); a late push body is answered 408, connection closed. */
  requestTimeoutMs?: number;
}

export interface AdminServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const DEFAULT_ADMIN_HOST = '127.0.0.1';
const DEFAULT_CHECK_TIMEOUT_MS = 2000;
const DEFAULT_ADMIN_REQUEST_TIMEOUT_MS = 10_000;

export interface TokenAttemptRules {
  limit: number;
  windowMs: number;
}

/**
 * 10 refused operator tokens per client address in any 10 minutes, then 429 + Retry-After without reading the
 * token: guessing a token of 16+ characters is hopeless, and the log gets at most 10 lines per address per window.
 */
export const ADMIN_TOKEN_ATTEMPTS: TokenAttemptRules = { limit: 10, windowMs: 10 * 60_000 };

/** Addresses with refusals are forgotten once idle, looked through when the map has grown this far. */
const ATTEMPTS_SWEEP_MIN = 1024;

// Refusals per client address, over domain/rate-limit.ts's sliding window. A right token does not clear them: on
// loopback every local process shares one address, so a pusher's successes must not reopen a guesser's window.
function tokenAttempts(rules: TokenAttemptRules, clock: () => number) {
  const refused = new Map<string, number[]>();
  let sweepAt = ATTEMPTS_SWEEP_MIN;
  const peek = (ip: string, now: number) => admit(refused.get(ip) ?? [], now, rules.limit, rules.windowMs).decision;
  return {
    /** Seconds the address must wait before a token of it is looked at again; undefined: it may try now. */
    waitSeconds(ip: string): number | undefined {
      const d = peek(ip, clock());
      return d.admitted ? undefined : d.retryAfterSeconds;
    },
    /** Records a refusal; the refusals in the window, this one included. */
    refuse(ip: string): number {
      const { log } = admit(refused.get(ip) ?? [], clock(), rules.limit, rules.windowMs);
      refused.set(ip, log);
      if (refused.size > sweepAt) {
        const now = clock();
        for (const [addr, times] of refused) if (times.every((t) => t <= now - rules.windowMs)) refused.delete(addr);
        sweepAt = Math.max(ATTEMPTS_SWEEP_MIN, 2 * refused.size);
      }
      return log.length;
    },
  };
}

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const PUSH_PATH = '/admin/v1/articles';

const PUSH_TYPES: Record<string, PushFormat> = {
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/json': 'json',
};

/** The push format of a Content-Type (UTF-8 only), or undefined. */
function pushFormat(contentType: string | undefined): PushFormat | undefined {
  const [type, ...params] = (contentType ?? '').split(';').map((p) => p.trim().toLowerCase());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return undefined;
  return PUSH_TYPES[type ?? ''];
}

/** The body's bytes, or 'too-large' / 'too-slow' (`deadline` in performance.now() time); reading stops there. */
function readBody(req: IncomingMessage, max: number, deadline: number): Promise<Buffer | 'too-large' | 'too-slow'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (outcome: 'too-large' | 'too-slow') => {
      clearTimeout(timer);
      req.off('data', onData);
      req.pause();
      resolve(outcome);
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > max) return stop('too-large');
      chunks.push(c);
    };
    // Node's requestTimeout is only checked periodically and lets a slow body run on: enforced here, on the body.
    const timer = setTimeout(() => stop('too-slow'), Math.max(0, deadline - performance.now()));
    req.on('data', onData);
    req.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.once('end', () => {
      clearTimeout(timer);
      // Decoded line by line by readPushBody: a line that is not UTF-8 is refused by itself.
      resolve(Buffer.concat(chunks));
    });
  });
}

/** A refused request's body is not read: the connection closes after the answer. */
function closeAfter(res: ServerResponse): void {
  res.setHeader('Connection', 'close');
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

function problem(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  extra: Record<string, string> = {},
): void {
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  send(res, status, 'application/problem+json', JSON.stringify({ type: 'about:blank', title, status, detail }));
}

async function runCheck(
  c: ReadinessCheck,
  timeoutMs: number,
): Promise<{ name: string; ok: boolean; error?: string; ms: number }> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(() => c.check()),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { name: c.name, ok: true, ms: Math.round(performance.now() - start) };
  } catch (e) {
    return {
      name: c.name,
      ok: false,
      error: errorText(e),
      ms: Math.round(performance.now() - start),
    };
  } finally {
    clearTimeout(timer);
  }
}

async function readiness(checks: ReadinessCheck[], timeoutMs: number): Promise<{ ready: boolean; body: string }> {
  const results = await Promise.all(checks.map((c) => runCheck(c, timeoutMs)));
  const failed = results.filter((r) => !r.ok);
  const ready = failed.length === 0;
  const body = JSON.stringify({
    status: ready ? 'ready' : 'not_ready',
    ...(ready ? {} : { failed: failed.map((r) => r.name) }),
    checks: Object.fromEntries(
      results.map((r) => [r.name, r.ok ? { ok: true, ms: r.ms } : { ok: false, ms: r.ms, error: r.error }]),
    ),
  });
  return { ready, body };
}

interface PushContext {
  opts: AdminOptions;
  attempts: ReturnType<typeof tokenAttempts>;
  attemptRules: typeof ADMIN_TOKEN_ATTEMPTS;
  /** When each request's head was complete (the body deadline counts from there). */
  started: WeakMap<IncomingMessage, number>;
  requestTimeoutMs: number;
}

async function push(ctx: PushContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const cfg = ctx.opts.push;
  if (!cfg?.token)
    return problem(
      res,
      404,
      'Not Found',
      'Push is off on this instance: set ADMIN_TOKEN to accept POST /admin/v1/articles',
    );
  if (req.method !== 'POST')
    return problem(res, 405, 'Method Not Allowed', `${PUSH_PATH} answers POST`, { Allow: 'POST' });
  if (refusedToken(ctx, cfg.token, req, res)) return;
  const format = pushFormat(req.headers['content-type']);
  if (format === undefined) {
    closeAfter(res);
    return problem(
      res,
      415,
      'Unsupported Media Type',
      'Send application/x-ndjson (one article per line) or application/json (an array of articles), in UTF-8',
    );
  }
  const body = await pushBody(ctx, cfg.maxBytes ?? PUSH_MAX_BYTES, req, res);
  if (body !== undefined) await storePush(ctx, cfg, body, format, res);
}

/** 429 or 401 (returns true) unless the request carries the operator token; refusals are counted per address. */
function refusedToken(ctx: PushContext, token: string, req: IncomingMessage, res: ServerResponse): boolean {
  const { attempts, opts } = ctx;
  const ip = req.socket.remoteAddress ?? 'unknown';
  const wait = attempts.waitSeconds(ip);
  if (wait !== undefined) {
    closeAfter(res);
    problem(
      res,
      429,
      'Too Many Requests',
      `Too many refused operator tokens from this address; try again in ${wait} s`,
      {
        'Retry-After': String(wait),
      },
    );
    return true;
  }
  const presented = bearerToken(req.headers.authorization);
  if (presented !== undefined && tokenMatches(presented, token)) return false;
  // Logged with the client address, never the token; the line that fills the window says so.
  const reason = presented === undefined ? 'missing' : 'wrong';
  const refused = attempts.refuse(ip);
  opts.log.warn(
    {
      kind: 'admin',
      event: 'token_refused',
      client_ip: ip,
      reason,
      refused_in_window: refused,
      limit: ctx.attemptRules.limit,
    },
    `admin: operator token refused (${reason})`,
  );
  const locked = attempts.waitSeconds(ip);
  if (locked !== undefined) {
    opts.log.warn(
      { kind: 'admin', event: 'token_locked', client_ip: ip, retry_after_s: locked },
      'admin: too many refused operator tokens; the address is answered 429 until the window frees',
    );
  }
  closeAfter(res);
  problem(res, 401, 'Unauthorized', 'Send the operator token (ADMIN_TOKEN) as Authorization: Bearer <token>', {
    'WWW-Authenticate': 'Bearer',
  });
  return true;
}

/** The body within its size and deadline, else the answer (413, 408) and undefined. */
async function pushBody(
  ctx: PushContext,
  max: number,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Buffer | undefined> {
  const tooLarge = () => {
    closeAfter(res);
    problem(res, 413, 'Content Too Large', `A push body is at most ${max} bytes; split it into several pushes`);
    return undefined;
  };
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > max) return tooLarge();
  const body = await readBody(req, max, (ctx.started.get(req) ?? performance.now()) + ctx.requestTimeoutMs);
  if (body === 'too-large') return tooLarge();
  if (body === 'too-slow') {
    closeAfter(res);
    problem(
      res,
      408,
      'Request Timeout',
      `The push body did not arrive within ${ctx.requestTimeoutMs / 1000} s; nothing was stored, send it again`,
    );
    // The rest of the body is never read: the connection goes once the answer is written.
    res.once('finish', () => req.socket.destroySoon());
    return undefined;
  }
  return body;
}

async function storePush(
  { opts }: PushContext,
  cfg: NonNullable<AdminOptions['push']>,
  body: Buffer,
  format: NonNullable<ReturnType<typeof pushFormat>>,
  res: ServerResponse,
): Promise<void> {
  let answer;
  try {
    // A failed line is logged by its line and error class, never the message: it may quote the line.
    answer = await pushArticles(body, format, cfg.store, cfg.clock, opts.onArticlesStored, (f) =>
      opts.log.warn(
        { kind: 'push', line: f.line, err_class: f.errClass },
        'admin: push: a line could not be processed (an unexpected error); the other lines went on',
      ),
    );
  } catch (e) {
    if (e instanceof PushBodyError) return problem(res, 400, 'Bad Request', e.message);
    if (!isDependencyUnavailable(e)) throw e;
    opts.log.warn({ err: errorText(e) }, 'push not stored: the database is busy or unavailable');
    return problem(
      res,
      503,
      'Service Unavailable',
      'The database cannot take the push right now; send the same body again (a line already stored answers duplicate, same-item)',
      { 'Retry-After': String(limits.unavailableRetryAfterSeconds) },
    );
  }
  opts.log.info({ stored: answer.stored, duplicates: answer.duplicates, invalid: answer.invalid }, 'push');
  send(res, 200, 'application/json', JSON.stringify(answer));
}

export async function startAdminServer(opts: AdminOptions): Promise<AdminServer> {
  const timeoutMs = opts.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_ADMIN_REQUEST_TIMEOUT_MS;
  const started = new WeakMap<IncomingMessage, number>();
  const attemptRules = opts.tokenAttempts ?? ADMIN_TOKEN_ATTEMPTS;
  const pushing: PushContext = {
    opts,
    attempts: tokenAttempts(attemptRules, opts.clock ?? Date.now),
    attemptRules,
    started,
    requestTimeoutMs,
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path === PUSH_PATH) return push(pushing, req, res);
    if (!PATHS.has(path))
      return problem(res, 404, 'Not Found', 'The admin listener serves GET /healthz, /readyz and /metrics');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return problem(res, 405, 'Method Not Allowed', `${path} answers GET`, { Allow: 'GET, HEAD' });
    if (path === '/healthz') return send(res, 200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      const { ready, body } = await readiness(opts.checks, timeoutMs);
      return send(res, ready ? 200 : 503, 'application/json', body);
    }
    const text = await opts.metrics.render();
    return send(res, 200, opts.metrics.contentType, text);
  };
  // Timeouts checked every second (Node's default: 30 s); a request head is bound by the request timeout too.
  const server = createServer(
    { connectionsCheckingInterval: 1000, requestTimeout: requestTimeoutMs, headersTimeout: requestTimeoutMs },
    (req, res) => {
      started.set(req, performance.now());
      handle(req, res).catch((e: unknown) => {
        opts.log.error({ path: (req.url ?? '').split('?')[0], err: errorText(e) }, 'admin request failed');
        if (!res.headersSent) problem(res, 500, 'Internal Server Error', 'The admin listener could not answer');
        else res.destroy();
      });
    },
  );
  const host = opts.host ?? DEFAULT_ADMIN_HOST;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    server,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
