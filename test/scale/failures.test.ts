/**
 * The behaviour when Redis or PostgreSQL fails, with real processes: one `fns serve` on the machine's PostgreSQL (a
 * fresh schema) and on a PRIVATE redis-server this file starts on a free port, kills and restarts (the
 * machine's shared Redis is never touched), then its PostgreSQL connections cut with
 * pg_terminate_backend (only this process's backends, found by their client ports).
 *
 * - Redis stopped: REST keeps serving with the per-instance limiter (exact plan), an open stream stays
 *   open and still receives, a new stream is closed with `unavailable` (1013), the log says so,
 *   `/metrics` counts the fallback decisions and `/readyz` answers 503 naming redis.
 * - Redis restarted on the same port: new streams open again and `/readyz` is 200, without a restart.
 * - PostgreSQL connections cut: 200 or the contract's 503 with Retry-After (never a 500, never a hang),
 *   200 again within a bound, and an article ingested afterwards reaches an open stream client (the
 *   LISTEN connection came back).
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { freePort, PrivateRedis } from '../support/private-redis.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits, plans, problems, stream, streamAddress } from '../../src/contract/index.js';
import { get, type Reply } from '../support/service.js';
import { connect, type Closed, type TestClient } from '../stream/support.js';
import { connectionString } from '../../src/store/postgres/db.js';
import { missingEngines, PG_URL } from './engines.js';
import { createKey, deployment, streamOutcome, type Deployment, type Instance } from './support.js';
import { until } from '../support/wait.js';

const TESTS = 3;
const missing = await missingEngines('test/scale/failures.test.ts', TESTS);

const ws = (i: Instance) => `${i.url.replace(/^http/, 'ws')}${streamAddress}`;

/** A request that must answer within `ms` (a hang is a failure, not a slow test). */
function bounded<T>(p: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}
const getNews = (i: Instance, key: string, ip: string): Promise<Reply> =>
  bounded(get(i.port, '/v1/news?limit=1', { key, ip }), `GET /v1/news (${ip})`);
async function admin(i: Instance, path: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${i.adminUrl}${path}`, { signal: AbortSignal.timeout(5000) });
  return { status: r.status, text: await r.text() };
}

/** The sum of a Prometheus counter over its labels. */
function counter(metrics: string, name: string): number {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/**
 * The local TCP ports of a process's established connections to `remotePort` (Linux /proc): its
 * PostgreSQL backends are the ones whose client_port is among them, so nothing of another process (or
 * another suite's service) is touched.
 */
function clientPortsOf(pid: number, remotePort: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const [local, remote, state, inode] = [f[1]!, f[2]!, f[3]!, f[9]!];
      // 01: ESTABLISHED
      if (state === '01' && inodes.has(inode) && parseInt(remote.split(':')[1]!, 16) === remotePort)
        ports.push(parseInt(local.split(':')[1]!, 16));
    }
  }
  return ports;
}

describe.skipIf(missing.length > 0)('failure behaviour of fns serve on PostgreSQL and a private Redis', () => {
  let redis: PrivateRedis;
  let d: Deployment;
  let svc: Instance;
  /** Streams opened before a failure, kept across the tests. */
  const clients: TestClient[] = [];

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort());
    await redis.start();
    d = await deployment({ redisUrl: redis.url });
    const migrate = d.fns(['migrate']);
    expect(migrate.status, migrate.stderr).toBe(0);
    svc = await d.serve({ ADMIN_PORT: '0' });
    expect(svc.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Listening is not ready yet (its connections may still be opening): wait for /readyz to say so.
    let ready: { status: number; text: string } | undefined;
    await until(
      async () => (ready = await admin(svc, '/readyz')).status === 200,
      'the service ready',
      30_000,
      100,
    ).catch((e: Error) => {
      throw new Error(`${e.message} (last: ${ready?.status} ${ready?.text})`);
    });
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await d?.close();
    await redis?.kill();
  }, 60_000);

  const ingest = (headline: string): string => {
    const r = d.fns(['articles', 'ingest', '-', '--json'], `${JSON.stringify({ content: headline })}\n`);
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout).ids[0];
  };

  it('Redis stopped: REST serves with the per-instance limiter, open streams stay and receive, new ones get 1013, logged, counted, not ready', async () => {
    const max = createKey(d, 'max');
    const starter = createKey(d, 'starter');
    const pro = createKey(d, 'pro');
    const open = connect(ws(svc), { key: pro.key, ip: '127.93.0.1' });
    clients.push(open);
    expect(await streamOutcome(svc, open, pro.key_id)).toBe('open');

    await redis.kill();

    // REST keeps serving.
    expect((await getNews(svc, max.key, '127.93.1.1')).status).toBe(200);
    // The plan still holds, decided by this instance alone (the starter key was never used before).
    const limit = plans.starter.rateLimit;
    const replies = [];
    for (let i = 0; i < limit + 3; i++) replies.push(await getNews(svc, starter.key, '127.93.1.2'));
    expect(replies.map((r) => r.status)).toEqual([...Array(limit).fill(200), ...Array(3).fill(429)]);
    expect(replies.at(-1)!.body).toMatchObject({ status: 429, title: problems.rateLimitExceeded.title });

    // The open stream stays open and still receives an article ingested with the CLI.
    const id = ingest('FLASH: grid operator declares emergency as Redis sleeps');
    expect((await open.received(1, 10_000)).map((m) => m.id)).toEqual([id]);
    expect(open.isOpen).toBe(true);

    // A new stream connection is refused with "try again later".
    const another = createKey(d, 'pro');
    const refused = connect(ws(svc), { key: another.key, ip: '127.93.2.1' });
    expect(await streamOutcome(svc, refused, another.key_id)).toEqual(stream.closeCodes.unavailable);

    // Logged, counted, and /readyz names redis.
    expect(svc.output()).toMatch(/redis[^\n]*(unreachable|connection lost|not reachable)/i);
    const metrics = await admin(svc, '/metrics');
    expect(metrics.status).toBe(200);
    expect(counter(metrics.text, 'fns_shared_state_fallbacks_total')).toBeGreaterThan(0);
    const ready = await admin(svc, '/readyz');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text).failed).toContain('redis');
  }, 30_000);

  it('Redis restarted on the same port: new streams open again and /readyz is 200, without restarting the service', async () => {
    await redis.start();
    const started = Date.now();
    const { key, key_id } = createKey(d, 'pro');
    let reopened: TestClient | undefined;
    const seen: ('open' | Closed)[] = [];
    // A new connection after each refusal, until one is admitted.
    const opens = async () => {
      const c = connect(ws(svc), { key, ip: '127.93.3.1' });
      const o = await streamOutcome(svc, c, key_id);
      seen.push(o);
      if (o === 'open') reopened = c;
      return reopened !== undefined;
    };
    await until(opens, 'a new stream to open after the restart', 15_000, 200).catch((e: Error) => {
      throw new Error(`${e.message} (outcomes: ${JSON.stringify(seen)})`);
    });
    for (const o of seen) if (o !== 'open') expect(o).toEqual(stream.closeCodes.unavailable);
    clients.push(reopened!);
    let ready: { status: number; text: string } | undefined;
    const readyAgain = async () => (ready = await admin(svc, '/readyz')).status === 200;
    await until(readyAgain, '/readyz 200', Math.max(0, started + 15_000 - Date.now()), 200).catch((e: Error) => {
      throw new Error(`${e.message} (last: ${ready?.status} ${ready?.text})`);
    });
    // The stream opened before the outage is still there.
    expect(clients[0]!.isOpen).toBe(true);
  }, 30_000);

  it('PostgreSQL connections cut: 200 or the contract 503 with Retry-After (never 500, never a hang), 200 again within 10 s, and a CLI article still reaches an open stream', async () => {
    const { key } = createKey(d, 'max');
    const pro = createKey(d, 'pro');
    const listener = connect(ws(svc), { key: pro.key, ip: '127.93.4.1' });
    clients.push(listener);
    expect(await streamOutcome(svc, listener, pro.key_id)).toBe('open');
    // A request right before the cut: the pool holds at least one connection to cut.
    expect((await getNews(svc, key, '127.93.5.1')).status).toBe(200);

    const pgPort = Number(new URL(PG_URL).port || 5432);
    const ports = clientPortsOf(svc.child.pid!, pgPort);
    expect(ports.length, 'the service holds PostgreSQL connections').toBeGreaterThanOrEqual(2);
    const pgAdmin = new pg.Client({
      connectionString: connectionString(PG_URL),
      application_name: 'fns test failures',
    });
    await pgAdmin.connect();
    // The cut lands while requests are in flight, and more follow right after it.
    const during = Array.from({ length: 10 }, () => getNews(svc, key, '127.93.5.1'));
    let cut: { application_name: string }[];
    try {
      cut = (
        await pgAdmin.query<{ application_name: string }>(
          `SELECT application_name, pg_terminate_backend(pid) AS ok FROM pg_stat_activity
            WHERE application_name IN ('fns serve', 'fns feed listener') AND client_port = ANY($1::int[])`,
          [ports],
        )
      ).rows;
    } finally {
      await pgAdmin.end();
    }
    const names = cut.map((r) => r.application_name);
    expect(names, 'the pool and the LISTEN connection were cut').toContain('fns serve');
    expect(names).toContain('fns feed listener');
    const after = Array.from({ length: 10 }, () => getNews(svc, key, '127.93.5.1'));

    // Every answer is 200 or the contract's 503 with Retry-After, within the bound (getNews: 5 s).
    const replies = await Promise.all([...during, ...after]);
    const expectAcceptable = (r: Reply) => {
      expect([200, 503], r.text).toContain(r.status);
      if (r.status === 503) {
        expect(r.body).toMatchObject({
          status: 503,
          title: problems.serviceUnavailable.title,
          detail: problems.serviceUnavailable.detail,
        });
        expect(r.headers['retry-after']).toBe(String(limits.unavailableRetryAfterSeconds));
      }
    };
    replies.forEach(expectAcceptable);
    // 200 again within 10 s (another key polls, so the first one's plan is not in the way).
    const poller = createKey(d, 'max').key;
    let last: Reply | undefined;
    const servesAgain = async () => {
      last = await getNews(svc, poller, '127.93.5.2');
      if (last.status === 200) return true;
      expectAcceptable(last);
      return false;
    };
    await until(servesAgain, '200 again', 10_000, 200).catch((e: Error) => {
      throw new Error(`${e.message} (last: ${last?.status} ${last?.text})`);
    });

    // The LISTEN connection came back, and an article committed by another process reaches the stream.
    await svc.waitOutput(/feed listener reconnected/, 10_000);
    const id = ingest('FLASH: exchange halts trading after database failover');
    const got = await listener.received(1, 10_000);
    expect(got.map((m) => m.id)).toEqual([id]);
    expect(svc.output()).not.toMatch(/"status":500\b/);
  }, 45_000);
});
