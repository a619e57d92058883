/** The admin listener (ADMIN_PORT): /healthz, /readyz with the service's readiness checks, /metrics, the admin push. */
import type { Log } from '../domain/log.js';
import type { Config } from '../config/index.js';
import { startAdminServer, type AdminServer, type ReadinessCheck } from '../ops/admin.js';
import type { DependencyHealth } from '../ops/health.js';
import type { Metrics } from '../ops/metrics.js';
import type { OpsLogger } from '../ops/logger.js';
import type { SemanticIndex } from '../indexing/index.js';
import type { Embedder } from '../search/index.js';
import type { Store } from '../store/ports/index.js';
import { ADMIN_LISTENER, fromListener } from './listeners.js';

/** Readiness checks that call out (the embedder) reuse a result this long. */
const READINESS_CACHE_MS = 30_000;

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

export interface ReadinessDeps {
  health: DependencyHealth;
  /** The watched store (its ping counts as a database call). */
  store: Store;
  /** The unwatched store's migration status (a schema behind its code is not a database failure). */
  migrationStatus?: Store['migrationStatus'];
  /** The Redis ping, with Redis. */
  redisPing?: (() => Promise<void>) | undefined;
  embedder: Embedder;
  index: Pick<SemanticIndex, 'status'>;
}

function readinessChecks(deps: ReadinessDeps): ReadinessCheck[] {
  const { health, store, migrationStatus, redisPing, embedder, index } = deps;
  return [
    health.check('database', 'database', () => store.ping()),
    ...(redisPing ? [health.check('redis', 'redis', redisPing)] : []),
    ...(migrationStatus
      ? [
          {
            name: 'migrations',
            check: async () => {
              const { applied, latest } = await migrationStatus();
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
        if (st.state !== 'ready')
          throw new Error(
            `index loading: ${st.vectors} vectors so far${st.error ? ` (last attempt: ${st.error})` : ''}`,
          );
      },
    },
  ];
}

/** Starts the admin listener when ADMIN_PORT is set. */
export async function startAdmin(
  config: Config,
  deps: ReadinessDeps & {
    metrics: Metrics;
    log: Log;
    clock: () => number;
    onArticlesStored: () => void;
    logger?: Pick<OpsLogger, 'pino'>;
  },
): Promise<AdminServer | undefined> {
  if (config.adminPort === undefined) return undefined;
  const started = startAdminServer({
    port: config.adminPort,
    host: config.adminHost,
    checks: readinessChecks(deps),
    metrics: deps.metrics,
    log: deps.log,
    // POST /admin/v1/articles (off without ADMIN_TOKEN); what it stores reaches the stream at once.
    push: { ...(config.adminToken ? { token: config.adminToken } : {}), store: deps.store.sources, clock: deps.clock },
    onArticlesStored: deps.onArticlesStored,
    clock: deps.clock,
    // Structured warnings: a refused token (the address, never the token), a failed push line (line, error class).
    ...(deps.logger
      ? { warn: (fields: Record<string, unknown>, msg: string) => deps.logger!.pino.warn(fields, msg) }
      : {}),
  });
  // A port in use or a wrong host is told as ADMIN_PORT / ADMIN_HOST, not PORT / HOST.
  return started.catch((e: unknown) => {
    throw fromListener(e, ADMIN_LISTENER);
  });
}
