/** An in-process REST service for tests: in-memory SQLite, a controllable clock, real HTTP on loopback. */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from '../../src/http/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { SemanticIndex, EmbeddingWorker } from '../../src/indexing/index.js';
import { limits } from '../../src/contract/index.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../../src/state/memory.js';
import type { IpGuardOptions } from '../../src/state/ports.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { createKey } from '../../src/cli/operator.js';
import { silentLog } from '../../src/domain/log.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { StatusBoard } from '../../src/status/index.js';
import { EmbeddingUnavailableError, type Embedder } from '../../src/search/index.js';
import type { NewArticle } from '../../src/store/ports/index.js';

export const LIVE = 'fns_live_';

export class FakeClock {
  constructor(public now: number = Date.parse('2026-11-21T12:00:00Z')) {}
  advance(ms: number): void {
    this.now += ms;
  }
  readonly fn = () => this.now;
}

/**
 * A deterministic stand-in for the embedding model (letter-trigram hashing). It is not semantic; the
 * real model is tested in test/search. `failing` makes every call fail like an unreachable service.
 */
export class TrigramEmbedder implements Embedder {
  readonly modelId = 'test:trigram';
  failing = false;
  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.failing) throw new EmbeddingUnavailableError('embedder down (test)');
    return texts.map((t) => {
      const v = new Float32Array(256);
      const s = ` ${t.toLowerCase()} `;
      for (let i = 0; i + 3 <= s.length; i++) {
        let h = 0;
        for (const c of s.slice(i, i + 3)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
        v[h % 256]! += 1;
      }
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    });
  }
}

export interface TestService {
  url: string;
  port: number;
  store: SqliteStore;
  clock: FakeClock;
  embedder: TrigramEmbedder;
  worker: EmbeddingWorker;
  key(
    tier: 'starter' | 'pro' | 'max' | 'free',
    accountId?: string,
  ): Promise<{ key: string; key_id: string; account_id: string }>;
  ingest(articles: Partial<NewArticle>[], at?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startTestService(
  opts: { trustProxy?: boolean; ipGuard?: IpGuardOptions } = {},
): Promise<TestService> {
  const store = new SqliteStore(':memory:');
  const clock = new FakeClock();
  const embedder = new TrigramEmbedder();
  // The status board as an instance runs it (its own tick is left to the test: `status.tick()`).
  const status = new StatusBoard({
    status: store.status,
    sources: store.sources,
    metrics: createMetrics({ defaultMetrics: false }),
    instanceState: async () => ({ seq: await store.articles.latestSeq(), databaseFailing: false, indexLoading: false }),
    clock: clock.fn,
    log: silentLog,
    tickMs: 3_600_000,
  });
  await status.start();
  const app = createApp({
    accounts: store.accounts,
    articles: store.articles,
    changes: store.changes,
    search: new SemanticIndex(store, embedder),
    rateLimiter: new MemoryRateLimiter(),
    ipGuard: new MemoryIpGuard(limits.ipGuard, opts.ipGuard),
    livePrefix: LIVE,
    clock: clock.fn,
    trustProxy: opts.trustProxy ?? false,
    validateResponses: true,
    status,
  });
  // The service's own server: Node-level rejections (400, 431, 408) get problem bodies too.
  const server: Server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const worker = new EmbeddingWorker(store.vectors, embedder);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    store,
    clock,
    embedder,
    worker,
    key: async (tier, accountId) => {
      // A named account is made on first use (accounts are created explicitly, then given keys).
      if (accountId && !(await store.accounts.getAccount(accountId)))
        await store.accounts.createAccount(tier, clock.now, accountId);
      return createKey(store.accounts, { tier, livePrefix: LIVE, now: clock.now, ...(accountId ? { accountId } : {}) });
    },
    async ingest(articles, at) {
      await store.articles.insert(
        articles.map((a) => ({
          content: 'x',
          urgency: 'regular',
          sentiment: null,
          published_at: null,
          tickers: [],
          ...a,
        })),
        at ?? clock.now,
      );
    },
    async close() {
      await status.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      store.close();
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** GET with an optional key and a chosen loopback source address (to play distinct client IPs). */
export function get(
  port: number,
  path: string,
  opts: { key?: string; ip?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        localAddress: opts.ip ?? '127.0.0.1',
        headers: { ...(opts.key !== undefined ? { 'X-API-Key': opts.key } : {}), ...opts.headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, body, text });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
