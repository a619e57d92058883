/** The PostgreSQL connection layer: one pool per store, its timeouts and schema, unreachable-database errors mapped. */
import type { Log } from '../../domain/log.js';
import { userInfo } from 'node:os';
import pg from 'pg';
import { isStoreUnavailable, StoreUnavailableError } from '../ports/errors.js';

export interface PgOptions {
  /** Schema holding the tables (created by the migrations); default `public`. */
  schema?: string;
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /** Connecting (and waiting for a free pooled connection) gives up after this; default 3000 ms. */
  connectTimeoutMs?: number;
  /** Any statement is cancelled after this (server side; the client gives up 1 s later); default 5000 ms. */
  statementTimeoutMs?: number;
  /** Waiting for a lock (e.g. another process's article insert) fails as "busy" after this; default 3000 ms. */
  lockTimeoutMs?: number;
  /** Shown in pg_stat_activity. */
  applicationName?: string;
  log?: Log;
}

export const DEFAULTS = {
  schema: 'public',
  poolSize: 10,
  connectTimeoutMs: 3000,
  statementTimeoutMs: 5000,
  lockTimeoutMs: 3000,
};

/** A schema name as tests and operators use it: a plain lower-case identifier (no quoting needed). */
export function checkSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,47}$/.test(schema))
    throw new RangeError(`schema must be a lower-case identifier of at most 48 characters, got "${schema}"`);
  return schema;
}

/** libpq's default user is the OS user; node-postgres reads $USER instead, which may be unset. */
export function connectionString(url: string): string {
  const u = new URL(url);
  if (!u.username) u.username = userInfo().username;
  return u.href;
}

/** Advisory lock classes (first key); the second key is hashtext(schema), so schemas never contend. */
export const LOCK = { migrations: 0x666e7301, articles: 0x666e7302, vectors: 0x666e7303 } as const;

/** The feed notification channel of a schema (see bus.ts). */
export const feedChannel = (schema: string) => `fns_feed_${schema}`;

/** A dependency failure as StoreUnavailableError (its cause kept); any other error as it is. */
export function unavailable(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !isStoreUnavailable(err)) return err;
  return new StoreUnavailableError(`PostgreSQL unavailable: ${(err as Error).message}`, { cause: err });
}

/** One statement on the pool or a connection (a `name` makes it a prepared statement); its rows. */
async function rows<R extends object>(
  on: pg.Pool | pg.PoolClient,
  text: string,
  values: unknown[],
  name?: string,
): Promise<R[]> {
  try {
    const r = await on.query<R>(name ? { name, text, values } : { text, values });
    return r.rows;
  } catch (e) {
    throw unavailable(e);
  }
}

/** Where the port implementations send their SQL: the pool, or one connection inside a transaction. */
export interface Db {
  readonly schema: string;
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[], name?: string): Promise<R[]>;
  /** Runs `fn` in one transaction; inside a transaction, in that one. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T>;
}

class ClientDb implements Db {
  constructor(
    readonly schema: string,
    private readonly client: pg.PoolClient,
  ) {}

  query<R extends object>(text: string, values: unknown[] = [], name?: string): Promise<R[]> {
    return rows<R>(this.client, text, values, name);
  }

  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return fn(this);
  }
}

export class PoolDb implements Db {
  constructor(
    readonly schema: string,
    readonly pool: pg.Pool,
  ) {}

  query<R extends object>(text: string, values: unknown[] = [], name?: string): Promise<R[]> {
    return rows<R>(this.pool, text, values, name);
  }

  async tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw unavailable(e);
    }
    let broken: unknown;
    // A checked-out connection may die (server restart, pg_terminate_backend): unheard, its 'error' would crash
    // the process. The pending query fails too, and the connection is closed, not returned to the pool.
    const onError = (e: Error) => (broken = e);
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await fn(new ClientDb(this.schema, client));
      await client.query('COMMIT');
      return result;
    } catch (e) {
      if (isStoreUnavailable(e)) broken = e;
      else await client.query('ROLLBACK').catch((r: unknown) => (broken = r));
      throw unavailable(e);
    } finally {
      // A connection that failed mid-transaction is closed, never handed to the next caller.
      client.removeListener('error', onError);
      client.release(broken instanceof Error ? broken : broken === undefined ? undefined : true);
    }
  }
}

export function createPool(url: string, options: PgOptions): pg.Pool {
  const schema = checkSchema(options.schema ?? DEFAULTS.schema);
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULTS.statementTimeoutMs;
  const pool = new pg.Pool({
    connectionString: connectionString(url),
    max: options.poolSize ?? DEFAULTS.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    statement_timeout: statementTimeoutMs,
    // A connection that went silent (no RST) fails too, shortly after the server would have cancelled.
    query_timeout: statementTimeoutMs + 1000,
    lock_timeout: options.lockTimeoutMs ?? DEFAULTS.lockTimeoutMs,
    idle_in_transaction_session_timeout: statementTimeoutMs * 4,
    keepAlive: true,
    idleTimeoutMillis: 30_000,
    options: `-c search_path=${schema}`,
    application_name: options.applicationName ?? 'fns',
  });
  // An idle pooled connection dropped by the server (restart, pg_terminate_backend) emits 'error':
  // the pool discards it and opens a new one on demand, so the store recovers without a restart.
  pool.on('error', (e) =>
    options.log?.warn({ err: e.message }, 'postgres idle connection lost; reconnecting on demand'),
  );
  return pool;
}
