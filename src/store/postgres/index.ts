/** Every port on one schema, shared by instances and the CLI; options passed in (docs/decisions/postgres-driver.md). */
import type pg from 'pg';
import type { NearDuplicateRule, Store, StoreChanges, StoreTx } from '../ports/index.js';
import { defaultNearRule } from '../ports/near-rule.js';
import type { SliceOptions } from '../ports/ingest-slice.js';
import { PgSources } from './sources.js';
import { PgAccounts } from './accounts.js';
import { PgArticles } from './articles.js';
import { pgChanges } from './changes.js';
import { checkSchema, createPool, DEFAULTS, PoolDb, unavailable, type Db, type PgOptions } from './db.js';
import { LATEST_VERSION, migrate } from './migrations.js';
import { PgStatus } from './status.js';
import { PgVectors } from './vectors.js';
import { PgWebhooks } from './webhooks.js';

export { migrate, LATEST_VERSION } from './migrations.js';
export { listenFeed } from './bus.js';
export interface OpenPostgresOptions extends PgOptions {
  /** Apply missing migrations before opening (default true); false: fail unless the schema is current. */
  migrate?: boolean;
  /** The near-duplicate rule of ingestItems (default: src/dedup/near.ts). */
  nearRule?: NearDuplicateRule;
  /** The slices of ingestItems (default: INGEST_SLICE_ITEMS items). */
  ingestSlices?: SliceOptions;
}

/** The ports on one `Db`: the pool's, or one transaction's connection. */
class PgPorts implements StoreTx {
  readonly accounts: PgAccounts;
  readonly articles: PgArticles;
  readonly vectors: PgVectors;
  readonly sources: PgSources;
  readonly webhooks: PgWebhooks;
  readonly status: PgStatus;

  constructor(
    protected readonly db: Db,
    protected readonly nearRule: NearDuplicateRule,
    protected readonly slices: SliceOptions = {},
  ) {
    this.accounts = new PgAccounts(db);
    this.articles = new PgArticles(db);
    this.vectors = new PgVectors(db);
    this.sources = new PgSources(db, nearRule, slices);
    this.webhooks = new PgWebhooks(db);
    this.status = new PgStatus(db);
  }

  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.db.tx((db) => fn(db === this.db ? this : new PgPorts(db, this.nearRule, this.slices)));
  }
}

export class PostgresStore extends PgPorts implements Store {
  readonly engine = 'postgres' as const;
  readonly changes: StoreChanges;

  constructor(
    db: Db,
    private readonly pool: pg.Pool | undefined,
    nearRule: NearDuplicateRule = defaultNearRule,
    /** Where the change signal listens (LISTEN/NOTIFY needs a connection of its own). */
    listen?: { url: string; connectTimeoutMs?: number },
    slices: SliceOptions = {},
  ) {
    super(db, nearRule, slices);
    this.changes = pgChanges(db.schema, listen);
  }

  get schema(): string {
    return this.db.schema;
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async migrationStatus(): Promise<{ applied: number; latest: number }> {
    const exists = await this.db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
    if (!exists[0]?.t) return { applied: 0, latest: LATEST_VERSION };
    const rows = await this.db.query<{ v: number }>('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
    return { applied: rows[0]?.v ?? 0, latest: LATEST_VERSION };
  }

  /** Pool counters, for metrics. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return {
      total: this.pool?.totalCount ?? 0,
      idle: this.pool?.idleCount ?? 0,
      waiting: this.pool?.waitingCount ?? 0,
    };
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}

/** Applies missing migrations first; throws StoreUnavailableError if the database is unreachable within the timeout. */
export async function openPostgresStore(url: string, options: OpenPostgresOptions = {}): Promise<PostgresStore> {
  const schema = checkSchema(options.schema ?? DEFAULTS.schema);
  if (options.migrate !== false) {
    try {
      await migrate(url, schema, { connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs });
    } catch (e) {
      throw unavailable(e);
    }
  }
  const pool = createPool(url, { ...options, schema });
  const store = new PostgresStore(
    new PoolDb(schema, pool),
    pool,
    options.nearRule,
    { url, connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs },
    options.ingestSlices,
  );
  try {
    const { applied, latest } = await store.migrationStatus();
    if (applied !== latest)
      throw new Error(`PostgreSQL schema "${schema}" is at migration ${applied} of ${latest}: run \`fns migrate\``);
  } catch (e) {
    await pool.end();
    throw e;
  }
  return store;
}
