/** The admin listener on its own: health, readiness with failing and hanging checks, metrics, 404/405. */
import { connect as netConnect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_ATTEMPTS, startAdminServer, type AdminServer, type ReadinessCheck } from '../../src/ops/admin.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { silentLog } from '../../src/domain/log.js';
import { recordLog } from '../support/log.js';

let admin: AdminServer | undefined;
afterEach(async () => {
  await admin?.close();
  admin = undefined;
});

async function start(checks: ReadinessCheck[], checkTimeoutMs = 200) {
  const logs: string[] = [];
  const metrics = createMetrics({ defaultMetrics: false });
  admin = await startAdminServer({ port: 0, checks, metrics, log: recordLog(logs), checkTimeoutMs });
  return { url: admin.url, metrics, logs };
}

describe('admin listener', () => {
  it('binds to loopback by default', async () => {
    const { url } = await start([]);
    expect(new URL(url).hostname).toBe('127.0.0.1');
  });

  it('answers /healthz with 200 {"status":"ok"}', async () => {
    const { url } = await start([{ name: 'broken', check: async () => Promise.reject(new Error('down')) }]);
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 when every check passes', async () => {
    const { url } = await start([
      { name: 'database', check: async () => {} },
      { name: 'redis', check: async () => {} },
    ]);
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe('ready');
    expect(Object.keys(body.checks).sort()).toEqual(['database', 'redis']);
  });

  it('answers /readyz with 503 naming the failing and the hanging checks, in parallel and bounded', async () => {
    const { url } = await start(
      [
        { name: 'database', check: async () => {} },
        { name: 'redis', check: async () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6379')) },
        { name: 'embedder', check: () => new Promise<void>(() => {}) },
        { name: 'migrations', check: () => new Promise<void>(() => {}) },
      ],
      300,
    );
    const started = Date.now();
    const res = await fetch(`${url}/readyz`);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.status).toBe('not_ready');
    expect(body.failed.sort()).toEqual(['embedder', 'migrations', 'redis']);
    expect(body.checks.database.ok).toBe(true);
    expect(body.checks.redis.error).toContain('ECONNREFUSED');
    expect(body.checks.embedder.error).toContain('300 ms');
    // Two hanging checks of 300 ms each: in parallel, not one after the other.
    expect(elapsed).toBeLessThan(590);
  });

  it('counts a check that throws synchronously as failed', async () => {
    const { url } = await start([
      {
        name: 'sync',
        check: () => {
          throw new Error('boom');
        },
      },
    ]);
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect((await res.json()).failed).toEqual(['sync']);
  });

  it('serves /metrics in the Prometheus text format', async () => {
    const { url, metrics } = await start([]);
    metrics.ipBlocks.inc();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('# TYPE fns_ip_blocks_total counter');
    expect(text).toMatch(/^fns_ip_blocks_total 1$/m);
  });

  it('answers anything else with a problem', async () => {
    const { url } = await start([]);
    const nf = await fetch(`${url}/v1/news`);
    expect(nf.status).toBe(404);
    expect(nf.headers.get('content-type')).toBe('application/problem+json');
    expect((await nf.json()).status).toBe(404);
    const post = await fetch(`${url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await post.json()).title).toBe('Method Not Allowed');
  });
});

describe('admin push: the request timeout holds for the body, whatever the token', () => {
  const TOKEN = 'admin-timeout-token-0123456789';

  /** Sends the head and the first bytes of a push body, then nothing; what arrives and when the socket closes. */
  function slowPush(url: string, elapsed: () => number): Promise<{ answer: string; closedAfterMs: number }> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const s = netConnect(Number(port), hostname, () => {
        s.write(
          `POST /admin/v1/articles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n{"content":"slo`,
        );
      });
      let answer = '';
      s.on('data', (d) => (answer += d.toString()));
      s.on('close', () => resolve({ answer, closedAfterMs: elapsed() }));
      s.on('error', reject);
    });
  }

  it('answers a body still arriving after requestTimeoutMs with 408, stores nothing and closes the connection', async () => {
    let calls = 0;
    admin = await startAdminServer({
      port: 0,
      checks: [],
      metrics: createMetrics({ defaultMetrics: false }),
      log: silentLog,
      requestTimeoutMs: 400,
      push: {
        token: TOKEN,
        store: {
          ingestItems: async () => {
            calls++;
            return [];
          },
        },
        clock: Date.now,
      },
    });
    const t0 = performance.now();
    const { answer, closedAfterMs } = await slowPush(admin.url, () => performance.now() - t0);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('Connection: close');
    expect(answer).toContain('"detail":"The push body did not arrive within 0.4 s; nothing was stored, send it again"');
    expect(closedAfterMs).toBeGreaterThanOrEqual(350);
    // Node's own request timeout alone let such a body run for a minute; the bound here is generous.
    expect(closedAfterMs).toBeLessThan(5000);
    expect(calls).toBe(0);
  });
});

describe('admin push: refused operator tokens are logged and limited per client address', () => {
  const TOKEN = 'admin-attempts-token-0123456789';
  const { limit, windowMs } = ADMIN_TOKEN_ATTEMPTS;

  async function startWithClock() {
    const clock = { now: Date.parse('2026-11-21T12:00:00Z') };
    const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
    const lines: string[] = [];
    let stored = 0;
    admin = await startAdminServer({
      port: 0,
      checks: [],
      metrics: createMetrics({ defaultMetrics: false }),
      log: recordLog(lines, warnings),
      clock: () => clock.now,
      push: {
        token: TOKEN,
        store: {
          ingestItems: async (items) => {
            stored += items.length;
            return items.map(
              () =>
                ({
                  status: 'stored',
                  id: '01JD0Q2V5N8Y3C7KQ4W9M6T1ZB',
                  receivedAt: new Date(clock.now).toISOString(),
                }) as never,
            );
          },
        },
        clock: () => clock.now,
      },
    });
    const push = (token: string | undefined) =>
      fetch(`${admin!.url}/admin/v1/articles`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-ndjson',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        body: `${JSON.stringify({ source: 'wire', id: 'a-1', content: 'Copper rallies on supply fears' })}\n`,
      });
    return { clock, warnings, lines, push, stored: () => stored };
  }

  it(`logs each refused token with the client address and never the token`, async () => {
    const t = await startWithClock();
    expect((await t.push('wrong-token-guess-0001')).status).toBe(401);
    expect((await t.push(undefined)).status).toBe(401);
    expect(t.warnings.map((w) => w.fields)).toEqual([
      { kind: 'admin', event: 'token_refused', client_ip: '127.0.0.1', reason: 'wrong', refused_in_window: 1, limit },
      { kind: 'admin', event: 'token_refused', client_ip: '127.0.0.1', reason: 'missing', refused_in_window: 2, limit },
    ]);
    expect(JSON.stringify(t.warnings)).not.toContain('wrong-token-guess');
  });

  it(`after ${limit} refused tokens within ${windowMs / 60_000} minutes: 429 with Retry-After, even for the right token, until the oldest leaves the window`, async () => {
    const t = await startWithClock();
    for (let i = 0; i < limit; i++) {
      expect((await t.push(`wrong-token-guess-${i}`)).status).toBe(401);
      t.clock.now += 1000;
    }
    expect(t.warnings.filter((w) => w.fields.event === 'token_locked')).toHaveLength(1);
    const locked = await t.push(TOKEN);
    expect(locked.status).toBe(429);
    const wait = Number(locked.headers.get('retry-after'));
    // The first refusal was `limit` seconds ago: it leaves the window in windowMs - limit s.
    expect(wait).toBe((windowMs - limit * 1000) / 1000);
    expect(((await locked.json()) as { detail: string }).detail).toBe(
      `Too many refused operator tokens from this address; try again in ${wait} s`,
    );
    expect(t.stored()).toBe(0);
    // While it waits, nothing is looked at and nothing more is logged.
    expect((await t.push('wrong-token-guess-x')).status).toBe(429);
    expect(t.warnings).toHaveLength(limit + 1);

    t.clock.now += wait * 1000;
    expect((await t.push(TOKEN)).status).toBe(200);
    expect(t.stored()).toBe(1);
  });
});
