/**
 * The embedded store: one SQLite file (WAL) under DATA_DIR. Safe for a second process (the CLI) to write
 * while the service runs: every read goes to the database, and the article feed is ordered by `seq`,
 * which SQLite assigns in commit order.
 *
 * A record of ports on one connection (db.ts), one file per port: accounts.ts, articles.ts, vectors.ts,
 * sources.ts, webhooks.ts, status.ts; the change signal in changes.ts, the schema in migrations.ts.
 */
import type Database from 'better-sqlite3';
import type { Store, StoreChanges, StoreTx } from '../ports/index.js';
import { defaultNearRule } from '../ports/near-rule.js';
import { SqliteAccounts } from './accounts.js';
import { SqliteArticles } from './articles.js';
import { sqliteChanges } from './changes.js';
import { openDatabase, type OpenOptions } from './db.js';
import { writeTurn } from './write-turn.js';
import { SqliteSources } from './sources.js';
import { SqliteStatus } from './status.js';
import { SqliteVectors } from './vectors.js';
import { SqliteWebhooks } from './webhooks.js';
import { ingestOffThread, type IngestThread } from './ingest-thread.js';

export { MIGRATIONS } from './migrations.js';
export class SqliteStore implements Store {
  readonly engine = 'sqlite' as const;
  /** The connection every port uses (tests and benchmarks reach into it; callers use the ports). */
  readonly db: Database.Database;
  readonly accounts: SqliteAccounts;
  readonly articles: SqliteArticles;
  readonly vectors: SqliteVectors;
  readonly sources: SqliteSources;
  readonly webhooks: SqliteWebhooks;
  readonly status: SqliteStatus;
  readonly changes: StoreChanges;
  /** The service's ingest thread (ingest-thread.ts), or none. */
  private readonly ingestThread: IngestThread | undefined;

  constructor(file: string, options: OpenOptions = {}) {
    const db = openDatabase(file, options);
    this.db = db;
    this.accounts = new SqliteAccounts(db);
    this.articles = new SqliteArticles(db);
    this.vectors = new SqliteVectors(db);
    const articles = this.articles;
    this.sources = new SqliteSources(
      db,
      (a, at) => articles.insertNow(a, at),
      options.nearRule ?? defaultNearRule,
      options.ingestSlices,
    );
    this.webhooks = new SqliteWebhooks(db);
    this.status = new SqliteStatus(db);
    this.changes = sqliteChanges(db, file);
    // The service: ingestion's SQLite work on the ingest thread (ingest-thread.ts), off the event loop.
    if (options.ingestOffThread && file !== ':memory:' && options.nearRule === undefined) {
      this.ingestThread = ingestOffThread(file, db, this.sources, this.vectors, {
        busyTimeoutMs: Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000)),
      });
    }
  }

  async close(): Promise<void> {
    await this.ingestThread?.close();
    this.db.close();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  /**
   * One IMMEDIATE write transaction around `fn` (waits for the write lock first, up to the busy
   * timeout). The connection is this store's: calls made meanwhile by others on the same store join it,
   * so the CLI (one command per process) is its user. Inside a transaction, `fn` runs in it; `tx` is
   * this store's own record (the ports all use the one connection).
   */
  async transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (this.db.inTransaction) return fn(this);
    await writeTurn(this.db);
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = await fn(this);
      this.db.exec('COMMIT');
      return result;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }
}
