/**
 * The composition root: reads the config (nothing else reads the environment), wires the adapters of store.ts,
 * state.ts, changes.ts, listeners.ts, workers.ts and admin.ts; `close` takes them apart in the reverse order.
 */
import type { Server } from 'node:http';
import type { Log } from '../domain/log.js';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config/index.js';
import { staleGenerated } from '../contract/freshness.js';
import { limits } from '../contract/index.js';
import { EmbeddingWorker, SemanticIndex } from '../indexing/index.js';
import { createEmbedder, type ClosableEmbedder, type Embedder } from '../search/index.js';
import type { Store, WakeSubscription } from '../store/ports/index.js';
import { DEFAULT_FEED_POLL_MS, type StreamHandle } from '../stream/index.js';
import { createLogger, type OpsLogger } from '../ops/logger.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { DependencyHealth } from '../ops/health.js';
import { countEmbedderErrors } from '../ops/observe.js';
import type { SourcePoller } from '../sources/poller.js';
import type { WebhookDispatcher } from '../webhooks/index.js';
import { startAdmin } from './admin.js';
import { followCommits, WOKEN_FEED_POLL_MS } from './changes.js';
import { closeServer, createListeners, listen } from './listeners.js';
import { openServiceState } from './state.js';
import { openServiceStore } from './store.js';
import { startPoller, startWebhooks } from './workers.js';
import { StatusBoard } from '../status/index.js';
import { warmEnrichment } from '../enrich/index.js';

export { WOKEN_FEED_POLL_MS } from './changes.js';
export { livePrefix } from '../auth/prefix.js';

export interface RunningService {
  url: string;
  server: Server;
  store: Store;
  worker: EmbeddingWorker;
  /**
   * Resolves when the search index has loaded the archive (it loads in the background; until then search answers 503).
   */
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
  /** The public status report this instance serves (`/status`, `/v1/status`). */
  status: StatusBoard;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Where the log's JSON lines go, one call per line (default: stdout). */
  log?: (m: string) => void;
  clock?: () => number;
  embedder?: Embedder | ClosableEmbedder;
  /**
   * Structured logs; default: JSON on stdout (readable lines on a terminal), or one line per call to `log` when given.
   */
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
  /** How old the shared status report may get before an instance builds the next (default 5 s). */
  statusRefreshMs?: number;
}

export function embedderFor(config: Config): ClosableEmbedder {
  return createEmbedder({
    ...(config.embeddingsUrl ? { embeddingsUrl: config.embeddingsUrl } : {}),
    ...(config.embeddingsModel ? { embeddingsModel: config.embeddingsModel } : {}),
    ...(config.embeddingsApiKey ? { embeddingsApiKey: config.embeddingsApiKey } : {}),
    timeoutMs: config.embeddingsTimeoutMs,
  });
}

/** The logger (its pino logger is every module's structured `log`, a child per component) and the metrics. */
function observability(options: ServiceOptions): { logger: OpsLogger; log: Log; metrics: Metrics } {
  const sink = options.log;
  const logger =
    options.logger ??
    createLogger(
      sink ? { destination: { write: (line) => sink(line.endsWith('\n') ? line.slice(0, -1) : line) } } : {},
    );
  return { logger, log: logger.structured, metrics: options.metrics ?? createMetrics() };
}

async function openConnections(config: Config, options: ServiceOptions, metrics: Metrics, log: Log) {
  // A dependency failure (a refused login, a full disk) keeps /readyz red while it lasts; callers answer 503 / 1013.
  const health = new DependencyHealth({
    metrics,
    holdMs: options.dependencyHoldMs ?? limits.unavailableRetryAfterSeconds * 1000,
    log: log.child({ component: 'health' }),
  });
  const { opened, store } = await openServiceStore(config, {
    metrics,
    log: log.child({ component: 'database' }),
    health,
  });
  const state = await openServiceState(config, { metrics, log: log.child({ component: 'state' }), health });
  // With a wake-up on commits (LISTEN/NOTIFY, the directory watch) the feed readers' timers are only the safety net.
  let feedPollMs = options.feedPollMs ?? DEFAULT_FEED_POLL_MS;
  const commits = await followCommits(store, {
    metrics,
    log: log.child({ component: 'changes' }),
    timerMs: () => feedPollMs,
  });
  if (commits.feedWake) feedPollMs = options.feedPollMs ?? WOKEN_FEED_POLL_MS;
  return { health, opened, store, state, commits, feedPollMs };
}

function searchParts(config: Config, store: Store, embedder: Embedder, log: Log) {
  // Saved under DATA_DIR on either engine: with PostgreSQL each instance keeps its own copy (docs/search.md says why).
  const index = new SemanticIndex(store, embedder, {
    log: log.child({ component: 'search' }),
    persistDir: join(config.dataDir, 'search-index'),
  });
  const worker = new EmbeddingWorker(store.vectors, embedder, { log: log.child({ component: 'embedding' }) });
  return { index, worker };
}

function statusBoard(
  parts: { store: Store; opened: Store; health: DependencyHealth; index: SemanticIndex },
  deps: { metrics: Metrics; clock: () => number; log: Log; refreshMs: number | undefined },
): StatusBoard {
  const { store, opened, health, index } = parts;
  return new StatusBoard({
    status: store.status,
    sources: store.sources,
    metrics: deps.metrics,
    instanceState: async () => ({
      seq: await opened.articles.latestSeq(),
      databaseFailing: health.failure('database') !== undefined,
      indexLoading: !index.ready,
    }),
    clock: deps.clock,
    log: deps.log.child({ component: 'status' }),
    ...(deps.refreshMs ? { refreshMs: deps.refreshMs } : {}),
  });
}

/** Poller, webhooks and admin listener (each when enabled); what they store wakes the stream and webhooks at once. */
async function startBackground(
  config: Config,
  options: ServiceOptions,
  deps: {
    store: Store;
    opened: Store;
    state: Awaited<ReturnType<typeof openServiceState>>;
    health: DependencyHealth;
    embedder: Embedder;
    index: SemanticIndex;
    stream: StreamHandle;
    feedWake: WakeSubscription | undefined;
    metrics: Metrics;
    logger: OpsLogger;
    log: Log;
    clock: () => number;
  },
) {
  const { store, opened, state, health, embedder, index, stream, feedWake, metrics, logger, log, clock } = deps;
  let webhooksWake = (): void => {};
  const storedNow = () => (stream.wake(), webhooksWake());
  const workerDeps = { config, store, clock, log, metrics };
  const poller =
    options.pollSources === false ? undefined : await startPoller({ ...workerDeps, logger, onStored: storedNow });
  const webhooks = options.webhooks === false ? undefined : await startWebhooks({ ...workerDeps, logger, feedWake });
  if (webhooks) webhooksWake = () => webhooks.wake();
  const admin = await startAdmin(config, {
    health,
    store,
    ...(opened.migrationStatus ? { migrationStatus: () => opened.migrationStatus!() } : {}),
    redisPing: state.ping,
    embedder,
    index,
    metrics,
    log: log.child({ component: 'admin' }),
    logger,
    clock,
    onArticlesStored: storedNow,
  });
  return { poller, webhooks, admin };
}

export async function startService(config: Config, options: ServiceOptions = {}): Promise<RunningService> {
  // The contract comes from generated/: a spec edited without `npm run generate` must not silently change nothing.
  const stale = staleGenerated();
  if (stale) throw new ConfigError(stale);
  const { logger, log, metrics } = observability(options);
  for (const w of config.warnings) log.warn({ component: 'config' }, w);
  const clock = options.clock ?? Date.now;
  const { health, opened, store, state, commits, feedPollMs } = await openConnections(config, options, metrics, log);
  const { feedWake } = commits;
  const embedder = countEmbedderErrors(options.embedder ?? embedderFor(config), metrics);
  const { index, worker } = searchParts(config, store, embedder, log);
  const status = statusBoard(
    { store, opened, health, index },
    { metrics, clock, log, refreshMs: options.statusRefreshMs },
  );
  const { server, stream } = createListeners({
    config,
    store,
    state,
    search: index,
    clock,
    log: log.child({ component: 'stream' }),
    logger,
    metrics,
    feedWake,
    feedPollMs,
    status,
  });
  state.onLeaseLost((connectionId) => stream.drop(connectionId, 'stream slot lease lost'));
  metrics.collectFrom({
    openStreams: () => stream.connections(),
    feedCursor: () => stream.feedCursor(),
    // Counted by the metrics themselves when they fail (not through `health`: once, not twice).
    latestSeq: () => opened.articles.latestSeq(),
    embeddingQueueLength: () => opened.vectors.queueLength(),
  });
  warmEnrichment();
  // The first report is published before the port opens: /v1/status never answers a placeholder.
  await status.start();
  const url = await listen(server, config);
  await stream.ready;
  await worker.start();
  // The archive's vectors load in the background: the service answers at once, search once the index is ready.
  const searchReady = index.start();
  searchReady.catch(() => {});
  const { poller, webhooks, admin } = await startBackground(config, options, {
    ...{ store, opened, state, health, embedder, index, stream, feedWake },
    ...{ metrics, logger, log, clock },
  });
  return {
    url,
    server,
    store,
    worker,
    searchReady,
    stream,
    metrics,
    logger,
    status,
    ...(admin ? { adminUrl: admin.url } : {}),
    ...(poller ? { poller } : {}),
    ...(webhooks ? { webhooks } : {}),
    // The reverse order: the workers, the listeners, the index, then the connections.
    async close() {
      await poller?.stop();
      await webhooks?.stop();
      await admin?.close();
      await status.stop();
      await stream.close();
      await worker.stop();
      await index.close();
      await closeServer(server);
      await commits.stop();
      await state.close();
      await store.close();
      if ('close' in embedder && typeof embedder.close === 'function') await (embedder as ClosableEmbedder).close();
    },
  };
}
