/** The store factory: the SQLite file under DATA_DIR by default, PostgreSQL when DATABASE_URL is set. */
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Store } from './ports/index.js';
import type { OpenPostgresOptions } from './postgres/index.js';
import { SqliteStore } from './sqlite/index.js';

/** How long the service's own SQLite writes may wait, synchronously, for another process's lock. */
export const SERVICE_BUSY_TIMEOUT_MS = 5;

/**
 * The CLI's slices: a bulk load commits (and syncs) once per 32 items rather than the service's 4; a service
 * writing to the same database waits for one such slice at most (docs/decisions/ingest-slices.md).
 */
const CLI_SLICES = { maxItems: 32 };

export function sqliteFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'fns.sqlite');
}

export interface OpenStoreOptions {
  /** `service`: SQLite waits on another process's lock a few ms at most (writes retry asynchronously); `cli`: 5 s. */
  role: 'service' | 'cli';
  /** PostgreSQL only: schema, pool size, timeouts, migrate (default: apply missing migrations). */
  postgres?: OpenPostgresOptions;
}

export async function openStore(
  config: Pick<Config, 'dataDir' | 'databaseUrl'>,
  options: OpenStoreOptions,
): Promise<Store> {
  if (config.databaseUrl) {
    // The embedded default never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./postgres/index.js');
    return openPostgresStore(config.databaseUrl, {
      // The CLI runs one command at a time: two connections are plenty.
      poolSize: options.role === 'cli' ? 2 : 10,
      applicationName: options.role === 'cli' ? 'fns cli' : 'fns serve',
      ingestSlices: options.role === 'cli' ? CLI_SLICES : {},
      ...options.postgres,
    });
  }
  return new SqliteStore(
    sqliteFile(config),
    options.role === 'service' ? { busyTimeoutMs: SERVICE_BUSY_TIMEOUT_MS } : { ingestSlices: CLI_SLICES },
  );
}
