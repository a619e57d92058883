/**
 * Outages of the database's environment, provoked for real: each answers the
 * documented 503 + Retry-After (REST, push) or 1013 (a new stream), turns /readyz red while it lasts
 * and green after, and counts in fns_dependency_errors_total. Never a 500, never a 1011.
 *
 * - SQLite on a full disk: the data directory is a 4 MiB tmpfs mounted for this test (root only; the
 *   suite says so and skips when mount is refused), filled to the last byte by a filler file.
 * - PostgreSQL refusing logins: the service runs as a role created here with LOGIN, which the test then
 *   sets to NOLOGIN and whose backends it terminates (SQLSTATE 28000 on every new connection); the role
 *   and its schema are removed afterwards.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/cli/operator.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { loadConfig } from '../../src/config/index.js';
import { limits, problems, stream, streamAddress } from '../../src/contract/index.js';
import { createLogger } from '../../src/ops/logger.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { livePrefix, startService, type RunningService } from '../../src/server/index.js';
import { get } from '../support/service.js';
import { PG_TEST_URL, pgReachable, reportUnreachable, sql } from '../support/postgres.js';
import { connect, dropClients, waitFor } from '../stream/support.js';
import { TrigramEmbedder } from '../support/service.js';
import { until } from '../support/wait.js';

const TOKEN = 'outage-test-token-0123456789';
/** /readyz red this long after the last failure (the default is the contract's Retry-After). */
const HOLD_MS = 300;

async function start(env: Record<string, string>): Promise<RunningService> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', ADMIN_TOKEN: TOKEN, ...env });
  const lines: string[] = [];
  const svc = await startService(config, {
    logger: createLogger({ destination: { write: (l) => void lines.push(l) }, pretty: false }),
    metrics: createMetrics({ defaultMetrics: false }),
    embedder: new TrigramEmbedder(),
    pollSources: false,
    dependencyHoldMs: HOLD_MS,
  });
  // The search index loads in the background and is a readiness check of its own: the tests start from
  // a service that is ready, so that /readyz turns red for the outage alone.
  await svc.searchReady;
  return svc;
}

const portOf = (svc: RunningService) => Number(new URL(svc.url).port);

async function push(
  svc: RunningService,
  lines: string[],
): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const r = await fetch(`${svc.adminUrl}/admin/v1/articles`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/x-ndjson' },
    body: lines.join('\n'),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() };
}

async function readyz(svc: RunningService): Promise<{ status: number; body: any }> {
  const r = await fetch(`${svc.adminUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: await r.json() };
}

async function databaseErrors(svc: RunningService): Promise<number> {
  const text = await (await fetch(`${svc.adminUrl}/metrics`)).text();
  return Number(/fns_dependency_errors_total\{dependency="database"\} (\d+)/.exec(text)?.[1] ?? NaN);
}

/** Polls `probe` until it returns true (a readiness transition is an event seen by polling /readyz). */
const articles = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      content: `${tag} ${i}: ${randomBytes(600).toString('hex')}`,
      source: 'outage',
      id: `${tag}-${i}`,
    }),
  );

// ---- SQLite on a full disk ----

function tryMountTmpfs(dir: string, size: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return (e as { stderr?: Buffer }).stderr?.toString().trim() || (e as Error).message;
  }
}

const mountDir = mkdtempSync(join(tmpdir(), 'fns-full-disk-'));
// 16 MiB: room, once the filler goes, for SQLite's write-ahead log at its working size (about 4 MiB).
const mountRefused = tryMountTmpfs(mountDir, '16m');
if (mountRefused)
  console.warn(`skipped the full-disk test: cannot mount a tmpfs here (${mountRefused}); it needs root`);

describe.skipIf(mountRefused !== undefined)(
  'SQLite on a full disk: push answers 503 + Retry-After, /readyz red then green, counted',
  () => {
    let svc: RunningService;
    const filler = join(mountDir, 'filler');

    beforeAll(async () => {
      svc = await start({ DATA_DIR: join(mountDir, 'data') });
    });
    afterAll(async () => {
      await svc?.close();
      execFileSync('umount', [mountDir]);
      rmSync(mountDir, { recursive: true, force: true });
    });

    it('refuses the push with 503 while the disk is full, never a 500, and takes it again once there is room', async () => {
      const { key } = await createKey(svc.store.accounts, {
        tier: 'pro',
        livePrefix: livePrefix(loadConfig({})),
        now: Date.now(),
      });
      expect((await push(svc, articles(2, 'before'))).status).toBe(200);
      expect((await readyz(svc)).status).toBe(200);
      expect(await databaseErrors(svc)).toBe(0);

      // Fill the file system to the last byte.
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (e) {
        expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      try {
        for (;;) writeSync(fd, chunk, 0, 512);
      } catch {
        // the last partial block
      } finally {
        closeSync(fd);
      }

      for (let i = 0; i < 3; i++) {
        const r = await push(svc, articles(200, `full-${i}`));
        expect(r.status).toBe(503);
        expect(r.retryAfter).toBe(String(limits.unavailableRetryAfterSeconds));
        // Stored in slices: lines before the failure may be in, and answer duplicate when sent again.
        expect(r.body.detail).toMatch(/send the same body again \(a line already stored answers duplicate/);
      }
      const red = await readyz(svc);
      expect(red.status).toBe(503);
      expect(red.body.failed).toContain('database');
      expect(red.body.checks.database.error).toMatch(/resource failure/);
      expect(await databaseErrors(svc)).toBeGreaterThanOrEqual(3);
      // Reads still work on a full disk: the list answers.
      expect((await get(portOf(svc), '/v1/news?limit=1', { key, ip: '127.91.0.1' })).status).toBe(200);

      rmSync(filler);
      await until(async () => (await readyz(svc)).status === 200, '/readyz green after the disk has room', 10_000, 50);
      const after = await push(svc, articles(200, 'after'));
      expect(after.status).toBe(200);
      expect(after.body.stored).toBe(200);
    });
  },
);

// ---- PostgreSQL refusing logins ----

const reachable = await pgReachable();

describe.skipIf(!reachable)(
  'PostgreSQL refusing logins (28000): 503 + Retry-After, 1013, /readyz red then green, counted',
  () => {
    const role = `fns_role_${randomBytes(5).toString('hex')}`;
    const schema = `fns_test_${randomBytes(6).toString('hex')}`;
    let svc: RunningService;
    /** The same schema through the superuser (keys can be made while the service's role may not log in). */
    let owner: PostgresStore;

    beforeAll(async () => {
      await sql(`CREATE ROLE ${role} LOGIN`);
      await sql(`CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
      // The migrations say CREATE SCHEMA IF NOT EXISTS, which asks for the privilege even when it exists.
      await sql(`GRANT CREATE ON DATABASE ${new URL(PG_TEST_URL).pathname.slice(1)} TO ${role}`);
      const url = new URL(PG_TEST_URL);
      url.username = role;
      svc = await start({
        DATABASE_URL: url.href,
        DATABASE_SCHEMA: schema,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'fns-pg-auth-')),
      });
      owner = await openPostgresStore(PG_TEST_URL, { schema, migrate: false });
    });
    afterAll(async () => {
      dropClients();
      await owner?.close();
      await sql(`ALTER ROLE ${role} LOGIN`).catch(() => {});
      await svc?.close();
      await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
      await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql(`DROP OWNED BY ${role}`);
      await sql(`DROP ROLE IF EXISTS ${role}`);
    });

    it('answers 503 (REST, push) and 1013 (stream) while the role may not log in, then serves again', async () => {
      const live = livePrefix(loadConfig({}));
      const { key } = await createKey(svc.store.accounts, { tier: 'pro', livePrefix: live, now: Date.now() });
      const port = portOf(svc);
      expect((await readyz(svc)).status).toBe(200);
      const before = await databaseErrors(svc);

      await sql(`ALTER ROLE ${role} NOLOGIN`);
      await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);

      // A key never seen before and a `since` page: nothing of this can come from a cache.
      const { key: fresh } = await createKey(owner.accounts, { tier: 'pro', livePrefix: live, now: Date.now() });
      const r = await get(port, `/v1/news?since=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`, {
        key: fresh,
        ip: '127.92.0.1',
      });
      expect(r.status).toBe(503);
      expect(r.body).toEqual(problems.serviceUnavailable);
      expect(r.headers['retry-after']).toBe(String(limits.unavailableRetryAfterSeconds));

      const p = await push(svc, articles(1, 'nologin'));
      expect(p.status).toBe(503);
      expect(p.retryAfter).toBe(String(limits.unavailableRetryAfterSeconds));

      const c = connect(`${svc.url.replace(/^http/, 'ws')}${streamAddress}`, { key: fresh, ip: '127.92.0.2' });
      expect(await c.closed).toEqual(stream.closeCodes.unavailable);

      const red = await readyz(svc);
      expect(red.status).toBe(503);
      expect(red.body.failed).toContain('database');
      expect(red.body.checks.database.error).toMatch(/not permitted to log in|authentication/);
      expect(await databaseErrors(svc)).toBeGreaterThan(before);

      await sql(`ALTER ROLE ${role} LOGIN`);
      await until(
        async () => (await readyz(svc)).status === 200,
        '/readyz green once the role may log in again',
        10_000,
        50,
      );
      expect((await get(port, '/v1/news?limit=1', { key, ip: '127.92.0.3' })).status).toBe(200);
      const ok = connect(`${svc.url.replace(/^http/, 'ws')}${streamAddress}`, { key, ip: '127.92.0.4' });
      await ok.opened;
      await waitFor(() => ok.isOpen, 'stream open');
    });
  },
);
reportUnreachable(reachable, 1);
