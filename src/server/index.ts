/**
 * The composition root: reads the config, wires adapters, starts the HTTP server. Nothing else reads
 * the environment.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config/index.js';
import { staleGenerated } from '../contract/freshness.js';
import { limits } from '../contract/index.js';
import { createApp } from '../http/app.js';
import { createHttpServer } from '../http/server.js';
import { EmbeddingWorker, SemanticIndex } from '../indexing/index.js';
import { createEmbedder, type ClosableEmbedder, type Embedder } from '../search/index.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../state/memory.js';
import { SqliteStore } from '../store/sqlite.js';
import { attachStream, MemoryStreamSlots, type StreamHandle } from '../stream/index.js';
import { startAdminServer, type AdminServer, type ReadinessCheck } from '../ops/admin.js';
import { createLogger, type OpsLogger } from '../ops/logger.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { countEmbedderErrors, createRequestObserver, createStreamObserver } from '../ops/observe.js';

export interface RunningService {
  url: string;
  server: Server;
  store: SqliteStore;
  worker: EmbeddingWorker;
  stream: StreamHandle;
  metrics: Metrics;
  logger: OpsLogger;
  /** The admin listener (/healthz, /readyz, /metrics) when ADMIN_PORT is set. */
  adminUrl?: string;
  close(): Promise<void>;
}

/** Readiness checks that call out (the embedder) reuse a result this long. */
export const READINESS_CACHE_MS = 30_000;

/** A check that runs `probe` at most once per `ttlMs` and answers from the last result in between. */
function cachedCheck(name: string, ttlMs: number, probe: () => Promise<void>): ReadinessCheck {
  let last: { at: number; result: Promise<void> } | undefined;
  return {
    name,
    check() {
      const now = Date.now();
      if (!last || now - last.at >= ttlMs) last = { at: now, result: probe() };
      return last.result;
    },
  };
}

/** `fns serve` listens on every interface unless HOST says otherwise (the demo: loopback). */
export const DEFAULT_HOST = '0.0.0.0';

/** How long the service's own writes (the embedding worker) may wait, synchronously, for a lock. */
export const SERVICE_BUSY_TIMEOUT_MS = 5;

export function databaseFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'fns.sqlite');
}

export function livePrefix(config: Pick<Config, 'brand'>): string {
  return limits.keyPrefixes.live.replace(/^fns_/, `${config.brand}_`);
}

export function embedderFor(config: Config): ClosableEmbedder {
  return createEmbedder({
    ...(config.embeddingsUrl ? { embeddingsUrl: config.embeddingsUrl } : {}),
    ...(config.embeddingsModel ? { embeddingsModel: config.embeddingsModel } : {}),
    ...(config.embeddingsApiKey ? { embeddingsApiKey: config.embeddingsApiKey } : {}),
    timeoutMs: config.embeddingsTimeoutMs,
  });
}

export async function startService(
  config: Config,
  options: {
    log?: (m: string) => void;
    clock?: () => number;
    embedder?: Embedder | ClosableEmbedder;
    /** Structured logs; default: JSON on stdout (readable lines on a terminal), or one line per call to `log` when given. */
    logger?: OpsLogger;
    metrics?: Metrics;
  } = {},
): Promise<RunningService> {
  if (config.databaseUrl || config.redisUrl) {
    throw new ConfigError('DATABASE_URL / REDIS_URL: the PostgreSQL and Redis adapters are not built yet; unset them to use the embedded store');
  }
  // The service reads the contract from generated/: a spec edited without `npm run generate` must not
  // silently change nothing.
  const stale = staleGenerated();
  if (stale) throw new ConfigError(stale);
  const sink = options.log;
  const logger = options.logger ?? createLogger(sink ? { destination: { write: (line) => sink(line.endsWith('\n') ? line.slice(0, -1) : line) } } : {});
  const log = options.log ?? ((m: string) => logger.log(m));
  const metrics = options.metrics ?? createMetrics();
  for (const w of config.warnings) log(`warning: ${w}`);
  const clock = options.clock ?? Date.now;
  // The service never waits on another process's write lock for more than a few ms (see OpenOptions).
  const store = new SqliteStore(databaseFile(config), { busyTimeoutMs: SERVICE_BUSY_TIMEOUT_MS });
  const embedder = countEmbedderErrors(options.embedder ?? embedderFor(config), metrics);
  const index = new SemanticIndex(store, embedder);
  const worker = new EmbeddingWorker(store, embedder, { log });
  // One IP guard for REST and the stream: a key presented on either counts for the client IP.
  const ipGuard = new MemoryIpGuard(limits.ipGuard, {
    exempt: config.ipGuardExempt,
    onBlock: (ip, until) => {
      metrics.ipBlocks.inc();
      log(`ip-guard: blocked ${ip} until ${new Date(until).toISOString()} (${limits.ipGuard.distinctKeys} different keys within ${limits.ipGuard.windowMs / 1000} s)`);
    },
  });
  const app = createApp({
    accounts: store,
    articles: store,
    search: index,
    rateLimiter: new MemoryRateLimiter(),
    ipGuard,
    livePrefix: livePrefix(config),
    clock,
    trustProxy: config.trustProxy,
    validateResponses: config.validateResponses,
    observe: createRequestObserver({ logger, metrics }),
  });
  const server = createHttpServer(app);
  const stream = attachStream(server, {
    accounts: store,
    articles: store,
    ipGuard,
    livePrefix: livePrefix(config),
    clock,
    trustProxy: config.trustProxy,
    slots: new MemoryStreamSlots(),
    recheckMs: config.streamRecheckMs,
    log,
    events: createStreamObserver({ logger, metrics }),
  });
  metrics.collectFrom({
    openStreams: () => stream.connections(),
    feedCursor: () => stream.feedCursor(),
    latestSeq: () => store.latestSeq(),
    embeddingQueueLength: () => store.queueLength(),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host ?? DEFAULT_HOST, () => resolve());
  });
  await stream.ready;
  await worker.start();
  let admin: AdminServer | undefined;
  if (config.adminPort !== undefined) {
    const checks: ReadinessCheck[] = [
      { name: 'database', check: async () => void (await store.latestSeq()) },
      cachedCheck('embedder', READINESS_CACHE_MS, async () => void (await embedder.embed(['readiness']))),
    ];
    admin = await startAdminServer({ port: config.adminPort, host: config.adminHost, checks, metrics, log });
  }
  const { port } = server.address() as AddressInfo;
  const bound = config.host ?? DEFAULT_HOST;
  const host = bound === '0.0.0.0' || bound === '::' ? 'localhost' : bound.includes(':') ? `[${bound}]` : bound;
  return {
    url: `http://${host}:${port}`,
    server,
    store,
    worker,
    stream,
    metrics,
    logger,
    ...(admin ? { adminUrl: admin.url } : {}),
    async close() {
      await admin?.close();
      await stream.close();
      await worker.stop();
      // Let requests in flight finish (up to 5 s), then cut whatever is left.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), 5000);
      await closed;
      clearTimeout(grace);
      store.close();
      if ('close' in embedder && typeof embedder.close === 'function') await (embedder as ClosableEmbedder).close();
    },
  };
}
