/**
 * The admin listener (ADMIN_PORT, loopback by default): liveness, readiness and Prometheus metrics for
 * the people who run the service. A plain node:http server, not part of the partner contract.
 *
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process runs.
 * - `GET /readyz`: every check in parallel, each bounded by `checkTimeoutMs`; 200 when all pass, else
 *   503 naming the ones that failed (and why).
 * - `GET /metrics`: the Prometheus text exposition of the instance's registry.
 * - anything else: a problem JSON (404, or 405 for another method on a known path).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

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
  log: (m: string) => void;
  /** Bound on each readiness check. Default 2000 ms. */
  checkTimeoutMs?: number;
}

export interface AdminServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export const DEFAULT_ADMIN_HOST = '127.0.0.1';
export const DEFAULT_CHECK_TIMEOUT_MS = 2000;

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

function problem(res: ServerResponse, status: number, title: string, detail: string, extra: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  send(res, status, 'application/problem+json', JSON.stringify({ type: 'about:blank', title, status, detail }));
}

async function runCheck(c: ReadinessCheck, timeoutMs: number): Promise<{ name: string; ok: boolean; error?: string; ms: number }> {
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
    return { name: c.name, ok: false, error: e instanceof Error ? e.message : String(e), ms: Math.round(performance.now() - start) };
  } finally {
    clearTimeout(timer);
  }
}

export async function readiness(checks: ReadinessCheck[], timeoutMs: number): Promise<{ ready: boolean; body: string }> {
  const results = await Promise.all(checks.map((c) => runCheck(c, timeoutMs)));
  const failed = results.filter((r) => !r.ok);
  const ready = failed.length === 0;
  const body = JSON.stringify({
    status: ready ? 'ready' : 'not_ready',
    ...(ready ? {} : { failed: failed.map((r) => r.name) }),
    checks: Object.fromEntries(results.map((r) => [r.name, r.ok ? { ok: true, ms: r.ms } : { ok: false, ms: r.ms, error: r.error }])),
  });
  return { ready, body };
}

export async function startAdminServer(opts: AdminOptions): Promise<AdminServer> {
  const timeoutMs = opts.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (!PATHS.has(path)) return problem(res, 404, 'Not Found', 'The admin listener serves GET /healthz, /readyz and /metrics');
    if (req.method !== 'GET' && req.method !== 'HEAD') return problem(res, 405, 'Method Not Allowed', `${path} answers GET`, { Allow: 'GET, HEAD' });
    if (path === '/healthz') return send(res, 200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      const { ready, body } = await readiness(opts.checks, timeoutMs);
      return send(res, ready ? 200 : 503, 'application/json', body);
    }
    const text = await opts.metrics.render();
    return send(res, 200, opts.metrics.contentType, text);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      opts.log(`admin: ${req.url ?? ''} failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) problem(res, 500, 'Internal Server Error', 'The admin listener could not answer');
      else res.destroy();
    });
  });
  server.requestTimeout = 10_000;
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
