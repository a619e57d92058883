/**
 * The store factory: the embedded SQLite file under DATA_DIR by default, PostgreSQL when DATABASE_URL
 * is set. The composition root (service) and the CLI open their store here.
 */
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Store } from './ports/index.js';
import type { OpenPostgresOptions } from './postgres/index.js';
import { SqliteStore } from './sqlite/index.js';

/** How long the service's own SQLite writes may wait, synchronously, for another process's lock. */
export const SERVICE_BUSY_TIMEOUT_MS = 5;

export function sqliteFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'fns.sqlite');
}

export interface OpenStoreOptions {
  /**
   * `service`: SQLite never waits on another process's lock for more than a few ms (its background
   * writes retry asynchronously); `cli`: waits its turn (SQLite's default 5 s busy timeout).
   */
  role: 'service' | 'cli';
  /** PostgreSQL only: schema, pool size, timeouts, migrate (default: apply missing migrations). */
  postgres?: OpenPostgresOptions;
}

export async function openStore(
  config: Pick<Config, 'dataDir' | 'databaseUrl'>,
  options: OpenStoreOptions,
): Promise<Store> {
  if (config.databaseUrl) {
    // Loaded only with DATABASE_URL: the embedded default never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./postgres/index.js');
    return openPostgresStore(config.databaseUrl, {
      // The CLI runs one command at a time: two connections are plenty.
      poolSize: options.role === 'cli' ? 2 : 10,
      applicationName: options.role === 'cli' ? 'fns cli' : 'fns serve',
      ...options.postgres,
    });
  }
  // The service: ingestion's SQLite work on a worker thread (sqlite/ingest-thread.ts), off its event loop.
  return new SqliteStore(
    sqliteFile(config),
    options.role === 'service' ? { busyTimeoutMs: SERVICE_BUSY_TIMEOUT_MS, ingestOffThread: true } : {},
  );
}
