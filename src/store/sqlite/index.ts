/** One SQLite file (WAL); a second process may write meanwhile: every read goes to the database. */
import type Database from 'better-sqlite3';
import type { Store, StoreChanges, StoreTx } from '../ports/index.js';
import { defaultNearRule } from '../ports/near-rule.js';
import { SqliteAccounts } from './accounts.js';
import { SqliteArticles } from './articles.js';
import { sqliteChanges } from './changes.js';
import { openDatabase, type OpenOptions } from './db.js';
import { SqliteSources } from './sources.js';
import { SqliteStatus } from './status.js';
import { SqliteVectors } from './vectors.js';
import { SqliteWebhooks } from './webhooks.js';

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

  constructor(file: string, options: OpenOptions = {}) {
    const db = openDatabase(file, options);
    this.db = db;
    this.accounts = new SqliteAccounts(db);
    this.articles = new SqliteArticles(db);
    this.vectors = new SqliteVectors(db);
    this.sources = new SqliteSources(
      db,
      (a, at) => this.articles.insertNow(a, at),
      options.nearRule ?? defaultNearRule,
      options.ingestSlices,
    );
    this.webhooks = new SqliteWebhooks(db);
    this.status = new SqliteStatus(db);
    this.changes = sqliteChanges(db, file);
  }

  async close(): Promise<void> {
    this.db.close();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  /** On the one connection, so other calls meanwhile join it: for the CLI (one command per process). */
  async transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (this.db.inTransaction) return fn(this);
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
