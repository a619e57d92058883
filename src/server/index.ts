/**
 * The composition root: reads the config, wires adapters, starts the HTTP server. Nothing else reads
 * the environment.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Server } from 'node:http';
import { basename, dirname, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { livePrefix } from '../auth/prefix.js';
import { ConfigError, type Config } from '../config/index.js';
import { staleGenerated } from '../contract/freshness.js';
import { limits } from '../contract/index.js';
import { createApp } from '../http/app.js';
import { createHttpServer } from '../http/server.js';
import { EmbeddingWorker, SemanticIndex } from '../indexing/index.js';
import { createEmbedder, type ClosableEmbedder, type Embedder } from '../search/index.js';
import { MemoryIpGuard, MemoryRateLimiter } from '../state/memory.js';
import { FallbackIpGuard, FallbackRateLimiter, type FallbackHooks } from '../state/fallback.js';
import { createRedisState } from '../state/redis/index.js';
import { openStore, sqliteFile } from '../store/index.js';
import type { Store } from '../store/ports/index.js';
import { listenFeed, PostgresStore } from '../store/postgres/index.js';
import { attachStream, DEFAULT_FEED_POLL_MS, type StreamHandle } from '../stream/index.js';
import { MemoryStreamSlots } from '../state/stream-slots.js';
import { startAdminServer, type AdminServer, type ReadinessCheck } from '../ops/admin.js';
import { createLogger, type OpsLogger } from '../ops/logger.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { DependencyHealth } from '../ops/health.js';
import { countEmbedderErrors, createRequestObserver, createStreamObserver } from '../ops/observe.js';
import { pollerUserAgent, SourcePoller } from '../sources/poller.js';
import { SecretBox, WebhookDispatcher } from '../webhooks/index.js';

export interface RunningService {
  url: string;
  server: Server;
  store: Store;
  worker: EmbeddingWorker;
  /** Resolves when the search index has loaded the archive (it loads in the background; until then search answers 503). */
  searchReady: Promise<void>;
  stream: StreamHandle;
  metrics: Metrics;
  logger: OpsLogger;
  /** The source poller (src/sources), unless started with `pollSources: false`. */
  poller?: SourcePoller;
  /** The webhook dispatcher (src/webhooks), unless started with `webhooks: false`. */
  webhooks?: WebhookDispatcher;
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

/** The feed reader's safety-net timer when commits wake it (a directory watch, LISTEN/NOTIFY). */
export const WOKEN_FEED_POLL_MS = 500;

/** `fns serve` listens on every interface unless HOST says otherwise (the demo: loopback). */
export const DEFAULT_HOST = '0.0.0.0';


export { livePrefix } from '../auth/prefix.js';

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
    /** The feed reader's timer (default: DEFAULT_FEED_POLL_MS, or WOKEN_FEED_POLL_MS with a wake-up). */
    feedPollMs?: number;
    /** Run the source poller in this process (default true; leases keep one poller per source across instances). */
    pollSources?: boolean;
    /** How long a failed database or Redis call keeps /readyz red (default: the contract's Retry-After). */
    dependencyHoldMs?: number;
    /** Deliver webhooks from this process (default true; leases keep one instance per endpoint). */
    webhooks?: boolean;
  } = {},
): Promise<RunningService> {
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
  // SQLite: the service never waits on another process's write lock for more than a few ms.
  // PostgreSQL (DATABASE_URL): migrations applied at start, under a lock.
  const opened = await openStore(config, { role: 'service', postgres: { schema: config.databaseSchema, log: (m) => void (metrics.dependencyErrors.inc({ dependency: 'database' }), log(`database: ${m}`)) } });
  // Every failed call of a dependency-failure class (connection, authentication, resource: a refused
  // login, a full disk) is counted and keeps /readyz red while it lasts; the callers answer 503 / 1013.
  const health = new DependencyHealth({ metrics, holdMs: options.dependencyHoldMs ?? limits.unavailableRetryAfterSeconds * 1000, log });
  const store = health.watch('database', opened);
  const ipGuardOptions = {
    exempt: config.ipGuardExempt,
    onBlock: (ip: string, until: number) => {
      metrics.ipBlocks.inc();
      log(`ip-guard: blocked ${ip} until ${new Date(until).toISOString()} (${limits.ipGuard.distinctKeys} different keys within ${limits.ipGuard.windowMs / 1000} s)`);
    },
  };
  const shared = config.redisUrl
    ? {
        state: createRedisState(config.redisUrl, {
          keyPrefix: `${config.redisPrefix}:`,
          ipGuardRules: limits.ipGuard,
          ipGuard: ipGuardOptions,
          onError: (e) => {
            metrics.dependencyErrors.inc({ dependency: 'redis' });
            log(`redis: connection lost (${e.message}); reconnecting`);
          },
          onReady: () => log('redis: connected'),
          slots: {
            // Another connection holds the account's slot now (this instance lost Redis for longer than
            // the lease): this one goes, so one connection per account holds across instances.
            onLeaseLost: (_accountId, connectionId) => lostLeases.forEach((f) => f(connectionId)),
          },
        }),
      }
    : undefined;
  const lostLeases = new Set<(connectionId: string) => void>();
  // No offline queue: until Redis is ready, REST decides in memory and new streams are refused (1013).
  await shared?.state.ready(5000).catch((e: Error) => log(`redis: ${e.message}; serving without it until it is reachable`));
  // A notification bus: PostgreSQL LISTEN/NOTIFY wakes the feed reader on every commit, by any process.
  let stopListening: (() => Promise<void>) | undefined;
  const wakers = new Set<() => void>();
  if (config.databaseUrl) {
    stopListening = await listenFeed(config.databaseUrl, config.databaseSchema, {
      onSeq: () => wakers.forEach((w) => w()),
      onReconnect: () => {
        log('database: feed notifications reconnected; reading what was committed meanwhile');
        wakers.forEach((w) => w());
      },
      log: (m) => {
        metrics.dependencyErrors.inc({ dependency: 'database' });
        log(`database: ${m}`);
      },
    });
  }
  // SQLite: another local process (the CLI) commits to the WAL file beside the database; a watch on the
  // data directory wakes the feed reader on every such write (coalesced), instead of waiting for a tick.
  let watcher: FSWatcher | undefined;
  if (store.engine === 'sqlite') {
    try {
      const file = sqliteFile(config);
      const prefix = basename(file);
      watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
        if (typeof name === 'string' && name.startsWith(prefix)) wakers.forEach((w) => w());
      });
      watcher.on('error', (e) => log(`stream: data directory watch failed (${e.message}); the feed is read every ${options.feedPollMs ?? DEFAULT_FEED_POLL_MS} ms`));
    } catch (e) {
      log(`stream: cannot watch the data directory (${(e as Error).message}); the feed is read on a timer only`);
    }
  }
  const woken = stopListening !== undefined || watcher !== undefined;
  const feedWake = woken
    ? (wake: () => void) => {
        wakers.add(wake);
        return () => wakers.delete(wake);
      }
    : undefined;
  const embedder = countEmbedderErrors(options.embedder ?? embedderFor(config), metrics);
  // The approximate index is saved under DATA_DIR on either engine: with PostgreSQL, each instance keeps
  // its own copy on its own disk (docs/search.md says why).
  const index = new SemanticIndex(store, embedder, { log, persistDir: join(config.dataDir, 'search-index') });
  const worker = new EmbeddingWorker(store.vectors, embedder, { log });
  // One IP guard for REST and the stream: a key presented on either counts for the client IP.
  const memoryIpGuard = new MemoryIpGuard(limits.ipGuard, ipGuardOptions);
  const memoryRateLimiter = new MemoryRateLimiter();
  // With Redis: shared by every instance; while Redis is down, each instance decides alone (logged, counted).
  const fallbackHooks: FallbackHooks = {
    onFallback: (port, e) => {
      metrics.dependencyErrors.inc({ dependency: 'redis' });
      log(`redis: ${port} unreachable (${e instanceof Error ? e.message : String(e)}); deciding in this instance until it is back`);
    },
    onFallbackDecision: (port) => metrics.sharedStateFallbacks.inc({ port: port === 'rateLimiter' ? 'rate_limiter' : 'ip_guard' }),
    onRecover: (port) => log(`redis: ${port} reachable again; shared decisions resumed`),
  };
  const ipGuard = shared ? new FallbackIpGuard(shared.state.ipGuard, memoryIpGuard, fallbackHooks) : memoryIpGuard;
  const rateLimiter = shared ? new FallbackRateLimiter(shared.state.rateLimiter, memoryRateLimiter, fallbackHooks) : memoryRateLimiter;
  const app = createApp({
    accounts: store,
    articles: store,
    search: index,
    rateLimiter,
    ipGuard,
    livePrefix: livePrefix(config),
    clock,
    trustProxy: config.trustProxy,
    validateResponses: config.validateResponses,
    observe: createRequestObserver({ logger, metrics }),
    // The key and first-page caches look at the store again on the next request after a commit.
    ...(feedWake ? { feedWake } : {}),
  });
  const server = createHttpServer(app, {
    maxConnections: config.maxConnections,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    onConnectionRefused: (cap) => metrics.connectionRefusals.inc({ cap }),
  });
  const stream = attachStream(server, {
    accounts: store,
    articles: store,
    ipGuard,
    livePrefix: livePrefix(config),
    clock,
    trustProxy: config.trustProxy,
    slots: shared ? health.watch('redis', shared.state.slots) : new MemoryStreamSlots(),
    ...(feedWake ? { feedWake } : {}),
    // With a wake-up (LISTEN/NOTIFY, the directory watch) the timer is only the safety net.
    feedPollMs: options.feedPollMs ?? (feedWake ? WOKEN_FEED_POLL_MS : DEFAULT_FEED_POLL_MS),
    recheckMs: config.streamRecheckMs,
    log,
    events: createStreamObserver({ logger, metrics }),
  });
  lostLeases.add((connectionId) => stream.drop(connectionId, 'stream slot lease lost'));
  metrics.collectFrom({
    openStreams: () => stream.connections(),
    feedCursor: () => stream.feedCursor(),
    // Counted by the metrics themselves when they fail (not through `health`: once, not twice).
    latestSeq: () => opened.articles.latestSeq(),
    embeddingQueueLength: () => opened.vectors.queueLength(),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host ?? DEFAULT_HOST, () => resolve());
  });
  await stream.ready;
  await worker.start();
  // The archive's vectors load in the background: the service answers at once, search once the index is ready.
  const searchReady = index.start();
  searchReady.catch(() => {});
  let webhooksWake = (): void => {};
  // Sources: polled here too (and by any `fns sources run`); after a poll stored articles, the stream reads at once.
  const poller =
    options.pollSources === false
      ? undefined
      : new SourcePoller({ store, userAgent: pollerUserAgent(config.brand), clock, log, metrics, onStored: () => (stream.wake(), webhooksWake()) });
  await poller?.start();
  // Webhooks: one more reader of the feed (its own, so a slow endpoint never holds the stream back).
  const webhooks =
    options.webhooks === false
      ? undefined
      : new WebhookDispatcher({
          store,
          secrets: new SecretBox(config.webhookSecretsKey),
          allowPrivate: config.webhookAllowPrivate,
          recheckMs: config.streamRecheckMs,
          clock,
          ...(feedWake ? { feedWake, feedPollMs: WOKEN_FEED_POLL_MS } : {}),
          log,
          onAttempt: (e) => {
            metrics.webhookAttempts.inc({ outcome: e.outcome });
            if (e.outcome === 'delivered') metrics.webhookDeliveryLag.observe(e.ageSeconds);
            const fields = { kind: 'webhook', endpoint_id: e.endpointId, webhook_id: e.webhookId, status: e.status, outcome: e.outcome, latency_ms: Math.round(e.latencyMs * 1000) / 1000, ...(e.error ? { error: e.error } : {}) };
            const msg = `webhook ${e.endpointId} ${e.status ?? '-'} ${e.outcome}`;
            if (e.outcome === 'delivered') logger.pino.info(fields, msg);
            else logger.pino.warn(fields, msg);
          },
        });
  await webhooks?.start();
  if (webhooks) webhooksWake = () => webhooks.wake();
  if (webhooks) metrics.collectFrom({ webhooks: () => webhooks.status() });
  let admin: AdminServer | undefined;
  if (config.adminPort !== undefined) {
    const checks: ReadinessCheck[] = [
      health.check('database', 'database', () => store.ping()),
      ...(shared ? [health.check('redis', 'redis', () => shared.state.ping())] : []),
      ...(opened instanceof PostgresStore
        ? [
            {
              name: 'migrations',
              check: async () => {
                const { applied, latest } = await opened.migrationStatus();
                if (applied !== latest) throw new Error(`schema at migration ${applied} of ${latest}: run fns migrate`);
              },
            },
          ]
        : []),
      cachedCheck('embedder', READINESS_CACHE_MS, async () => void (await embedder.embed(['readiness']))),
      {
        name: 'search',
        check: async () => {
          const st = index.status();
          if (st.state !== 'ready') throw new Error(`index loading: ${st.vectors} vectors so far${st.error ? ` (last attempt: ${st.error})` : ''}`);
        },
      },
    ];
    admin = await startAdminServer({
      port: config.adminPort,
      host: config.adminHost,
      checks,
      metrics,
      log,
      // POST /admin/v1/articles (off without ADMIN_TOKEN); what it stores reaches the stream at once.
      push: { ...(config.adminToken ? { token: config.adminToken } : {}), store, clock },
      onArticlesStored: () => (stream.wake(), webhooksWake()),
    });
  }
  const { port } = server.address() as AddressInfo;
  const bound = config.host ?? DEFAULT_HOST;
  const host = bound === '0.0.0.0' || bound === '::' ? 'localhost' : bound.includes(':') ? `[${bound}]` : bound;
  return {
    url: `http://${host}:${port}`,
    server,
    store,
    worker,
    searchReady,
    stream,
    metrics,
    logger,
    ...(admin ? { adminUrl: admin.url } : {}),
    ...(poller ? { poller } : {}),
    ...(webhooks ? { webhooks } : {}),
    async close() {
      await poller?.stop();
      await webhooks?.stop();
      await admin?.close();
      await stream.close();
      await worker.stop();
      await index.close();
      // Let requests in flight finish (up to 5 s), then cut whatever is left.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), 5000);
      await closed;
      clearTimeout(grace);
      watcher?.close();
      await stopListening?.();
      await shared?.state.close();
      await store.close();
      if ('close' in embedder && typeof embedder.close === 'function') await (embedder as ClosableEmbedder).close();
    },
  };
}
