/**
 * The REST caches (src/auth/cache.ts, src/http/list-cache.ts) never outlive a change for more than a
 * second: a new article, a key deactivated and a tier change made through a second store connection
 * (what the `fns` CLI does from another process) are seen by the running app within one second, on
 * SQLite and on PostgreSQL. And the first page is really served from the cache, but never with an
 * article that has left the lookback window.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { limits, plans } from '../../src/contract/index.js';
import { createApp } from '../../src/http/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { createKey, setKeyActive, setTier } from '../../src/cli/operator.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../../src/state/memory.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { openPostgresStore, PostgresStore } from '../../src/store/postgres/index.js';
import type { NewArticle, Store } from '../../src/store/ports/index.js';
import { FakeClock, get, LIVE } from '../support/service.js';
import { dropSchemas, freshSchema, PG_TEST_URL, pgReachable, reportUnreachable } from '../support/postgres.js';

/**
 * The bound the service promises for operator changes and article delivery (docs/operations.md "Operating it: the `fns`
 * command line").
 */
const WITHIN_MS = 1000;
const LIMIT = 5;

interface Engine {
  name: string;
  skip: boolean;
  /** The service's store and a second connection to the same data (the CLI's). */
  open(): Promise<{ service: Store; cli: Store; cleanup(): Promise<void> }>;
}

const article = (content: string): NewArticle => ({
  content,
  urgency: 'regular',
  sentiment: null,
  published_at: null,
  tickers: [{ ticker: 'SPY', sentiment: 'neutral', relevance: 1 }],
});

/** The two connections, closed by `cleanup` before the engine's own cleaning (`drop`). */
const connections = (service: Store, cli: Store, drop: () => unknown) => ({
  service,
  cli,
  async cleanup() {
    await service.close();
    await cli.close();
    await drop();
  },
});

const sqlite: Engine = {
  name: 'SQLite',
  skip: false,
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'fns-caches-'));
    const service = new SqliteStore(join(dir, 'fns.sqlite'));
    const cli = new SqliteStore(join(dir, 'fns.sqlite'));
    return connections(service, cli, () => rmSync(dir, { recursive: true, force: true }));
  },
};

const reachable = await pgReachable();
const postgres: Engine = {
  name: 'PostgreSQL',
  skip: !reachable,
  async open() {
    const schema = freshSchema();
    const service = await openPostgresStore(PG_TEST_URL, { schema, poolSize: 2 });
    const cli = await openPostgresStore(PG_TEST_URL, { schema: (service as PostgresStore).schema, poolSize: 2 });
    return connections(service, cli, () => dropSchemas([schema]));
  },
};

interface Running {
  port: number;
  clock: FakeClock;
  cli: Store;
  service: Store;
  listCalls: () => number;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function start(engine: Engine): Promise<Running> {
  const { service, cli, cleanup } = await engine.open();
  const clock = new FakeClock(Date.now());
  let calls = 0;
  const articles = Object.create(service.articles) as Store['articles'];
  articles.listJson = (q, withTickers) => {
    calls++;
    return service.articles.listJson(q, withTickers);
  };
  const app = createApp({
    accounts: service.accounts,
    articles,
    changes: service.changes,
    search: { search: async () => [] },
    rateLimiter: new MemoryRateLimiter(),
    ipGuard: new MemoryIpGuard(limits.ipGuard),
    livePrefix: LIVE,
    clock: clock.fn,
    trustProxy: false,
    validateResponses: true,
  });
  const server: Server = createHttpServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push({
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await cleanup();
    },
  });
  return { port: (server.address() as AddressInfo).port, clock, cli, service, listCalls: () => calls };
}

/** Polls `probe` until it returns true; the elapsed time, or Infinity past `WITHIN_MS`. */
async function seenWithin(probe: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (performance.now() - started <= WITHIN_MS) {
    if (await probe()) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

const list = (r: Running, key: string) => get(r.port, `/v1/news?limit=${LIMIT}`, { key });

for (const engine of [sqlite, postgres]) {
  describe.skipIf(engine.skip)(`first-page cache on ${engine.name}`, () => {
    it('answers a repeated first page without asking the store again', async () => {
      const r = await start(engine);
      await r.cli.articles.insert([article('one'), article('two')], r.clock.now - 60_000);
      const { key } = await createKey(r.service.accounts, { tier: 'max', livePrefix: LIVE, now: r.clock.now });
      // The insert's own change notice (LISTEN/NOTIFY on PostgreSQL) may reach the service after the
      // first request and rightly invalidate it: once notices have settled, a repeat costs no query.
      let first: Awaited<ReturnType<typeof list>> | undefined;
      let second: Awaited<ReturnType<typeof list>> | undefined;
      const settled = await seenWithin(async () => {
        first = await list(r, key);
        const before = r.listCalls();
        second = await list(r, key);
        return r.listCalls() === before;
      });
      expect(settled).toBeLessThan(Infinity);
      expect(first!.status).toBe(200);
      expect(second!.text).toBe(first!.text);
    });

    it('serves an article inserted through another connection within one second', async () => {
      const r = await start(engine);
      await r.cli.articles.insert([article('old news')], r.clock.now - 60_000);
      const { key } = await createKey(r.service.accounts, { tier: 'max', livePrefix: LIVE, now: r.clock.now });
      expect((await list(r, key)).body.articles[0].content).toBe('old news');
      const [fresh] = await r.cli.articles.insert([article('fresh news')], () => r.clock.now);
      expect(await seenWithin(async () => (await list(r, key)).body.articles[0]?.id === fresh!.id)).toBeLessThanOrEqual(
        WITHIN_MS,
      );
    });

    it('never serves a cached article once it has left the lookback window', async () => {
      const r = await start(engine);
      const windowMs = plans.pro.lookbackHours * 3600_000;
      await r.cli.articles.insert([article('about to expire')], r.clock.now - windowMs + 10_000);
      const { key } = await createKey(r.service.accounts, { tier: 'pro', livePrefix: LIVE, now: r.clock.now });
      // The page must really be cached before the clock moves: the insert's change notice may reach the
      // service after the first request and rightly invalidate it, so wait until a repeat costs no query.
      const settled = await seenWithin(async () => {
        const first = await list(r, key);
        const before = r.listCalls();
        const second = await list(r, key);
        return first.body.count === 1 && second.body.count === 1 && r.listCalls() === before;
      });
      expect(settled).toBeLessThan(Infinity);
      // Nothing is written; only the clock moves the window past the article.
      r.clock.advance(10_001);
      expect((await list(r, key)).body).toMatchObject({ count: 0, articles: [] });
    });
  });

  describe.skipIf(engine.skip)(`key cache on ${engine.name}`, () => {
    it('refuses a key deactivated through another connection within one second', async () => {
      const r = await start(engine);
      const k = await createKey(r.cli.accounts, { tier: 'max', livePrefix: LIVE, now: r.clock.now });
      expect((await list(r, k.key)).status).toBe(200);
      await setKeyActive(r.cli.accounts, k.key_id, false);
      expect(await seenWithin(async () => (await list(r, k.key)).status === 403)).toBeLessThanOrEqual(WITHIN_MS);
    });

    it('applies a tier change made through another connection within one second', async () => {
      const r = await start(engine);
      await r.cli.articles.insert([article('with tickers')], r.clock.now - 60_000);
      const k = await createKey(r.cli.accounts, { tier: 'max', livePrefix: LIVE, now: r.clock.now });
      expect((await list(r, k.key)).body.articles[0].tickers).toEqual([
        { ticker: 'SPY', sentiment: 'neutral', relevance: 1 },
      ]);
      await setTier(r.cli.accounts, k.account_id, 'pro', r.clock.now);
      expect(
        await seenWithin(async () => {
          const page = await list(r, k.key);
          return (
            page.status === 200 &&
            page.headers['x-ratelimit-limit'] === String(plans.pro.rateLimit) &&
            !('tickers' in page.body.articles[0])
          );
        }),
      ).toBeLessThanOrEqual(WITHIN_MS);
    });

    it('refuses a key whose account was cancelled past its grace window, with no store change', async () => {
      const r = await start(engine);
      const k = await createKey(r.cli.accounts, { tier: 'pro', livePrefix: LIVE, now: r.clock.now });
      await r.cli.accounts.cancel(k.account_id, r.clock.now);
      expect((await list(r, k.key)).status).toBe(200);
      r.clock.advance(limits.graceWindowMs);
      expect((await list(r, k.key)).status).toBe(403);
    });
  });
}

reportUnreachable(reachable, 6);
