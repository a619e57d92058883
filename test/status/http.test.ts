/**
 * GET /v1/status and GET /status on the REST app: public (no key), never rate limited, answered from the
 * board's last report (the store is not read per request), validated against the contract, and the
 * contract's rules for parameters and methods as on every other path.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits } from '../../src/contract/index.js';
import { silentLog } from '../../src/domain/log.js';
import { createApp } from '../../src/http/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../../src/state/memory.js';
import { StatusBoard } from '../../src/status/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { TrigramEmbedder } from '../support/service.js';
import { SemanticIndex } from '../../src/indexing/index.js';

let store: SqliteStore;
let board: StatusBoard;
let server: Server;
let base: string;
let storeReads = 0;

beforeAll(async () => {
  store = new SqliteStore(':memory:');
  await store.sources.add(
    { name: 'harbor-wire', url: 'http://10.9.8.7/feed?token=s3cr3t', everyMs: 30_000, urgency: 'auto' },
    Date.now(),
  );
  const status = new Proxy(store.status, {
    get: (t, prop) => {
      const v = Reflect.get(t, prop, t);
      return typeof v === 'function' ? (...a: unknown[]) => (storeReads++, v.apply(t, a)) : v;
    },
  });
  board = new StatusBoard({
    status,
    sources: store.sources,
    metrics: createMetrics({ defaultMetrics: false }),
    instanceState: async () => ({ seq: 0, databaseFailing: false, indexLoading: false }),
    clock: Date.now,
    log: silentLog,
    tickMs: 60_000,
  });
  await board.start();
  const app = createApp({
    accounts: store.accounts,
    articles: store.articles,
    changes: store.changes,
    search: new SemanticIndex(store, new TrigramEmbedder()),
    rateLimiter: new MemoryRateLimiter(),
    ipGuard: new MemoryIpGuard(limits.ipGuard),
    livePrefix: limits.keyPrefixes.live,
    clock: Date.now,
    trustProxy: false,
    validateResponses: true,
    status: board,
  });
  server = createHttpServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await board.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await store.close();
});

describe('GET /v1/status is public and never rate limited', () => {
  it('answers the report without a key, with no rate-limit headers, cacheable by anyone for 5 s', async () => {
    const res = await fetch(`${base}/v1/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('public, max-age=5');
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    expect(res.headers.get('ratelimit')).toBeNull();
    const body = await res.json();
    expect(body.sources).toEqual([expect.objectContaining({ name: 'harbor-wire', poll_interval_seconds: 30 })]);
  });

  it('answers every request of a burst (200 in a row) without reading the store', async () => {
    const before = storeReads;
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => fetch(`${base}/v1/status`).then((r) => r.status)),
    );
    expect(new Set(answers)).toEqual(new Set([200]));
    expect(storeReads).toBe(before);
  });

  it('refuses a query parameter as every operation does (400, naming it)', async () => {
    const res = await fetch(`${base}/v1/status?verbose=1`);
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toBe('verbose is not a parameter of this operation');
  });

  it('answers HEAD as GET and another method with 405 and Allow', async () => {
    expect((await fetch(`${base}/v1/status`, { method: 'HEAD' })).status).toBe(200);
    const post = await fetch(`${base}/v1/status`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('GET /status is the same report as a web page', () => {
  it('answers HTML without a key', async () => {
    const res = await fetch(`${base}/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('harbor-wire');
  });
});

describe('the report carries nothing internal', () => {
  it('neither the page nor the JSON names a feed address, host or token', async () => {
    for (const path of ['/v1/status', '/status']) {
      const text = await (await fetch(`${base}${path}`)).text();
      expect(text).not.toMatch(/10\.9\.8\.7|s3cr3t|token=|127\.0\.0\.1|https?:\/\//);
    }
  });
});
