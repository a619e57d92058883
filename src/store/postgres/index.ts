/**
 * The PostgreSQL store (DATABASE_URL): every store port on one schema, for several instances and the
 * operator CLI at once.
 *
 * Driver: `pg` (node-postgres) 8.23.1, chosen by measurement (scripts/bench-pg-driver.ts, this
 * machine, PostgreSQL 15, medians of 7 rounds): a keyed lookup (findKey) 0.10 ms sequential vs 0.15 ms
 * for `postgres` 3.4.9; the 50-row JSON list 0.34 vs 0.47 ms; a 1,000-row insert transaction 13 vs
 * 29 ms (one INSERT … unnest) and 86 vs 132 ms (row by row); equal with 16 queries in flight. pg also
 * has no install scripts, a plain Pool whose broken connections are discarded and replaced, and
 * LISTEN on a dedicated Client (bus.ts).
 *
 * Every option is passed in (schema, pool size, timeouts); nothing here reads the environment.
 */
import type pg from 'pg';
import type { Tier } from '../../contract/index.js';
import type { StoredArticle } from '../../domain/articles.js';
import type { AccountRecord } from '../../domain/tiers.js';
import { isStoreUnavailable, StoreUnavailableError } from '../ports/errors.js';
import type { CarrierRecord, FeedEntry, ItemRecord, ItemOutcome, KeyInfo, KeyRecord, ListQuery, NearDuplicateRule, NewArticle, PollOutcome, SourcedItem, SourceRecord, Store, UrgencySetting, WebhookAttempt, WebhookEndpoint, WebhookState } from '../ports/index.js';
import { defaultNearRule } from '../ports/near-rule.js';
import { PgSources } from './sources.js';
import { PgAccounts } from './accounts.js';
import { PgArticles } from './articles.js';
import { checkSchema, createPool, DEFAULTS, PoolDb, type Db, type PgOptions } from './db.js';
import { LATEST_VERSION, migrate } from './migrations.js';
import { PgVectors } from './vectors.js';
import { PgWebhooks } from './webhooks.js';

export { migrate, LATEST_VERSION } from './migrations.js';
export { listenFeed, type FeedListenerOptions } from './bus.js';
export type { PgOptions } from './db.js';

export interface OpenPostgresOptions extends PgOptions {
  /** Apply missing migrations before opening (default true); false: fail unless the schema is current. */
  migrate?: boolean;
  /** The near-duplicate rule of ingestItems (default: src/dedup/near.ts). */
  nearRule?: NearDuplicateRule;
}

export class PostgresStore implements Store {
  readonly engine = 'postgres' as const;
  private readonly accounts: PgAccounts;
  private readonly articles: PgArticles;
  private readonly vectors: PgVectors;
  private readonly sources: PgSources;
  private readonly webhooks: PgWebhooks;

  constructor(
    private readonly db: Db,
    private readonly pool: pg.Pool | undefined,
    private readonly nearRule: NearDuplicateRule = defaultNearRule,
  ) {
    this.sources = new PgSources(db, nearRule);
    this.accounts = new PgAccounts(db);
    this.articles = new PgArticles(db);
    this.vectors = new PgVectors(db);
    this.webhooks = new PgWebhooks(db);
  }

  get schema(): string {
    return this.db.schema;
  }

  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    return this.db.tx((db) => fn(db === this.db ? this : new PostgresStore(db, undefined, this.nearRule)));
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /** Applied and latest migration versions (for /readyz: current when equal). */
  async migrationStatus(): Promise<{ applied: number; latest: number }> {
    const exists = await this.db.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
    if (!exists[0]?.t) return { applied: 0, latest: LATEST_VERSION };
    const rows = await this.db.query<{ v: number }>('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
    return { applied: rows[0]?.v ?? 0, latest: LATEST_VERSION };
  }

  /** Pool counters, for metrics. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool?.totalCount ?? 0, idle: this.pool?.idleCount ?? 0, waiting: this.pool?.waitingCount ?? 0 };
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }

  // ---- AccountStore ----
  createAccount(tier: Tier, now: number, accountId?: string): Promise<AccountRecord> {
    return this.accounts.createAccount(tier, now, accountId);
  }
  getAccount(accountId: string): Promise<AccountRecord | undefined> {
    return this.accounts.getAccount(accountId);
  }
  setTier(accountId: string, tier: Tier, now: number): Promise<AccountRecord | undefined> {
    return this.accounts.setTier(accountId, tier, now);
  }
  cancel(accountId: string, now: number): Promise<AccountRecord | undefined> {
    return this.accounts.cancel(accountId, now);
  }
  createKey(accountId: string, keyHash: string, keyId: string, now: number): Promise<void> {
    return this.accounts.createKey(accountId, keyHash, keyId, now);
  }
  findKey(keyHash: string): Promise<KeyRecord | undefined> {
    return this.accounts.findKey(keyHash);
  }
  setKeyActive(keyId: string, active: boolean): Promise<KeyRecord | undefined> {
    return this.accounts.setKeyActive(keyId, active);
  }
  listKeys(accountId?: string): Promise<KeyInfo[]> {
    return this.accounts.listKeys(accountId);
  }

  // ---- ArticleStore ----
  insert(articles: NewArticle[], at: number | (() => number)): Promise<StoredArticle[]> {
    return this.articles.insert(articles, at);
  }
  list(query: ListQuery): Promise<StoredArticle[]> {
    return this.articles.list(query);
  }
  listJson(query: ListQuery, withTickers: boolean): Promise<string[]> {
    return this.articles.listJson(query, withTickers);
  }
  getMany(ids: string[]): Promise<StoredArticle[]> {
    return this.articles.getMany(ids);
  }
  count(): Promise<number> {
    return this.articles.count();
  }
  feedAfter(seq: number, limit: number): Promise<FeedEntry[]> {
    return this.articles.feedAfter(seq, limit);
  }
  latestSeq(): Promise<number> {
    return this.articles.latestSeq();
  }

  // ---- SourceStore (sources.ts) ----
  addSource(s: { name: string; url: string; everyMs: number; urgency: UrgencySetting }, now: number): Promise<SourceRecord> {
    return this.sources.addSource(s, now);
  }
  listSources(): Promise<SourceRecord[]> {
    return this.sources.listSources();
  }
  getSource(name: string): Promise<SourceRecord | undefined> {
    return this.sources.getSource(name);
  }
  setSourcePaused(name: string, paused: boolean, now: number): Promise<SourceRecord | undefined> {
    return this.sources.setSourcePaused(name, paused, now);
  }
  removeSource(name: string): Promise<boolean> {
    return this.sources.removeSource(name);
  }
  claimDueSources(owner: string, now: number, leaseMs: number, limit: number): Promise<SourceRecord[]> {
    return this.sources.claimDueSources(owner, now, leaseMs, limit);
  }
  recordPoll(name: string, owner: string, outcome: PollOutcome): Promise<void> {
    return this.sources.recordPoll(name, owner, outcome);
  }
  registryVersion(): Promise<number> {
    return this.sources.registryVersion();
  }
  ingestItems(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]> {
    return this.sources.ingestItems(items, at);
  }
  carriersOf(articleId: string): Promise<CarrierRecord[]> {
    return this.sources.carriersOf(articleId);
  }
  itemsOf(articleId: string): Promise<ItemRecord[]> {
    return this.sources.itemsOf(articleId);
  }
  pruneSeenItems(olderThanMs: number, now: number): Promise<number> {
    return this.sources.pruneSeenItems(olderThanMs, now);
  }

  // ---- VectorStore ----
  enqueueMissing(model: string): Promise<number> {
    return this.vectors.enqueueMissing(model);
  }
  nextBatch(limit: number, leaseMs?: number): Promise<{ id: string; content: string }[]> {
    return this.vectors.nextBatch(limit, leaseMs);
  }
  storeVectors(model: string, vectors: { id: string; vector: Float32Array }[]): Promise<void> {
    return this.vectors.storeVectors(model, vectors);
  }
  queueLength(): Promise<number> {
    return this.vectors.queueLength();
  }
  deferEmbedding(ids: string[], now: number, maxAttempts: number): Promise<string[]> {
    return this.vectors.deferEmbedding(ids, now, maxAttempts);
  }
  lexicalSearch(query: string, limit: number): Promise<{ id: string; score: number }[]> {
    return this.vectors.lexicalSearch(query, limit);
  }
  vectorsAfter(model: string, afterRowid: number, limit?: number): Promise<{ rowid: number; id: string; vector: Float32Array }[]> {
    return this.vectors.vectorsAfter(model, afterRowid, limit);
  }

  // ---- webhooks (webhooks.ts) ----

  addWebhook(e: { id: string; accountId: string; url: string; tickers: string[] | null; secret: string }, now: number): Promise<WebhookEndpoint> {
    return this.webhooks.addWebhook(e, now);
  }
  getWebhook(id: string): Promise<WebhookEndpoint | undefined> {
    return this.webhooks.getWebhook(id);
  }
  listWebhooks(accountId?: string): Promise<WebhookEndpoint[]> {
    return this.webhooks.listWebhooks(accountId);
  }
  removeWebhook(id: string): Promise<boolean> {
    return this.webhooks.removeWebhook(id);
  }
  setWebhookState(id: string, state: WebhookState, reason: string | null, now: number): Promise<WebhookEndpoint | undefined> {
    return this.webhooks.setWebhookState(id, state, reason, now);
  }
  rotateWebhookSecret(id: string, secret: string, now: number, overlapMs: number): Promise<WebhookEndpoint | undefined> {
    return this.webhooks.rotateWebhookSecret(id, secret, now, overlapMs);
  }
  claimWebhooks(owner: string, now: number, leaseMs: number, limit: number): Promise<WebhookEndpoint[]> {
    return this.webhooks.claimWebhooks(owner, now, leaseMs, limit);
  }
  releaseWebhooks(owner: string): Promise<void> {
    return this.webhooks.releaseWebhooks(owner);
  }
  recordWebhookAttempt(id: string, owner: string, a: WebhookAttempt): Promise<boolean> {
    return this.webhooks.recordWebhookAttempt(id, owner, a);
  }
}

/**
 * Opens the store on `url` (postgres://…), applying missing migrations first (under an advisory lock,
 * so instances starting together do not race). Throws StoreUnavailableError when the database cannot
 * be reached within the connect timeout.
 */
export async function openPostgresStore(url: string, options: OpenPostgresOptions = {}): Promise<PostgresStore> {
  const schema = checkSchema(options.schema ?? DEFAULTS.schema);
  if (options.migrate !== false) {
    try {
      await migrate(url, schema, { connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs });
    } catch (e) {
      throw isStoreUnavailable(e) && !(e instanceof StoreUnavailableError)
        ? new StoreUnavailableError(`PostgreSQL unavailable: ${(e as Error).message}`, { cause: e })
        : e;
    }
  }
  const pool = createPool(url, { ...options, schema });
  const store = new PostgresStore(new PoolDb(schema, pool), pool, options.nearRule);
  try {
    const { applied, latest } = await store.migrationStatus();
    if (applied !== latest) throw new Error(`PostgreSQL schema "${schema}" is at migration ${applied} of ${latest}: run \`fns migrate\``);
  } catch (e) {
    await pool.end();
    throw e;
  }
  return store;
}
