/** The public listeners: the REST app and the WebSocket stream on one HTTP server (the contract's connection caps). */
import type { Log } from '../domain/log.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { livePrefix } from '../auth/prefix.js';
import type { Config } from '../config/index.js';
import { createApp, type ArchiveSearch } from '../http/app.js';
import type { StatusSource } from '../http/status.js';
import { createHttpServer } from '../http/server.js';
import type { OpsLogger } from '../ops/logger.js';
import type { Metrics } from '../ops/metrics.js';
import { createRequestObserver, createStreamObserver } from '../ops/observe.js';
import type { Store, WakeSubscription } from '../store/ports/index.js';
import { attachStream, type StreamHandle } from '../stream/index.js';
import type { ServiceState } from './state.js';

/** `fns serve` listens on every interface unless HOST says otherwise (the demo: loopback). */
const DEFAULT_HOST = '0.0.0.0';

export interface ListenerDeps {
  config: Config;
  store: Store;
  state: ServiceState;
  search: ArchiveSearch;
  clock: () => number;
  log: Log;
  logger: OpsLogger;
  metrics: Metrics;
  feedWake: WakeSubscription | undefined;
  feedPollMs: number;
  status: StatusSource;
}

export function createListeners(deps: ListenerDeps): { server: Server; stream: StreamHandle } {
  const { config, store, state, search, clock, log, logger, metrics, feedWake, feedPollMs, status } = deps;
  const app = createApp({
    accounts: store.accounts,
    articles: store.articles,
    changes: store.changes,
    search,
    rateLimiter: state.rateLimiter,
    ipGuard: state.ipGuard,
    livePrefix: livePrefix(config),
    clock,
    trustProxy: config.trustProxy,
    validateResponses: config.validateResponses,
    observe: createRequestObserver({ logger, metrics }),
    status,
    // The key and first-page caches look at the store again on the next request after a commit.
    ...(feedWake ? { feedWake } : {}),
  });
  const server = createHttpServer(app, {
    maxConnections: config.maxConnections,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    onConnectionRefused: (cap) => metrics.connectionRefusals.inc({ cap }),
  });
  const stream = attachStream(server, {
    accounts: store.accounts,
    articles: store.articles,
    ipGuard: state.ipGuard,
    livePrefix: livePrefix(config),
    clock,
    trustProxy: config.trustProxy,
    slots: state.slots,
    ...(feedWake ? { feedWake } : {}),
    feedPollMs,
    recheckMs: config.streamRecheckMs,
    log,
    events: createStreamObserver({ logger, metrics }),
  });
  return { server, stream };
}

/** A listener's address settings, carried by its `listen` errors so that the message names the setting to change. */
export interface ListenerSettings {
  /** How the message names the listener; empty for the public one. */
  listener: string;
  /** The setting(s) of its port and its host, as an operator writes them. */
  port: string;
  host: string;
}

export const PUBLIC_LISTENER: ListenerSettings = { listener: '', port: 'PORT or --port', host: 'HOST or --host' };
export const ADMIN_LISTENER: ListenerSettings = {
  listener: 'the admin listener',
  port: 'ADMIN_PORT',
  host: 'ADMIN_HOST',
};

/** `e`, marked with the listener it came from (read by the CLI's error messages, cli/errors.ts). */
export function fromListener(e: unknown, settings: ListenerSettings): unknown {
  if (typeof e === 'object' && e !== null) Object.assign(e, { listenerSettings: settings });
  return e;
}

/** Listens on HOST:PORT; the URL clients use. */
export async function listen(server: Server, config: Config): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(fromListener(e, PUBLIC_LISTENER)));
    server.listen(config.port, config.host ?? DEFAULT_HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const bound = config.host ?? DEFAULT_HOST;
  const host = bound === '0.0.0.0' || bound === '::' ? 'localhost' : bound.includes(':') ? `[${bound}]` : bound;
  return `http://${host}:${port}`;
}

/** Lets requests in flight finish (up to 5 s), then cuts whatever is left. */
export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), 5000);
  await closed;
  clearTimeout(grace);
}
