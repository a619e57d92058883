/** The service's store: opened from the Config, every port's failing calls reported to the health of `database`. */
import type { Log } from '../domain/log.js';
import type { Config } from '../config/index.js';
import type { DependencyHealth } from '../ops/health.js';
import type { Metrics } from '../ops/metrics.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/ports/index.js';

/**
 * SQLite never waits more than a few ms on another process's write lock; PostgreSQL migrates at start, under a lock.
 * `opened` is the store itself (metrics count their own failures); `store` the same ports watched by `health`.
 */
export async function openServiceStore(
  config: Config,
  deps: { metrics: Metrics; log: Log; health: DependencyHealth },
): Promise<{ opened: Store; store: Store }> {
  const { metrics, log, health } = deps;
  const opened = await openStore(config, {
    role: 'service',
    postgres: {
      schema: config.databaseSchema,
      log: countedLog(log, () => metrics.dependencyErrors.inc({ dependency: 'database' })),
    },
  });
  return { opened, store: watchedStore(health, opened) };
}

function watchedStore(health: DependencyHealth, store: Store): Store {
  const watch = <T extends object>(target: T): T => health.watch('database', target);
  const top = watch(store);
  const migrationStatus = store.migrationStatus;
  return {
    engine: store.engine,
    accounts: watch(store.accounts),
    articles: watch(store.articles),
    vectors: watch(store.vectors),
    sources: watch(store.sources),
    webhooks: watch(store.webhooks),
    status: watch(store.status),
    changes: store.changes,
    transaction: (fn) => top.transaction(fn),
    ping: () => top.ping(),
    ...(migrationStatus ? { migrationStatus: () => top.migrationStatus!() } : {}),
    close: () => top.close(),
  };
}

/** The database's log, each warning counted as a dependency error too. */
function countedLog(log: Log, count: () => void): Log {
  return {
    info: (f, m) => log.info(f, m),
    warn: (f, m) => (count(), log.warn(f, m)),
    error: (f, m) => (count(), log.error(f, m)),
    child: (b) => countedLog(log.child(b), count),
  };
}
