/**
 * The embedded store: one SQLite file (WAL) under DATA_DIR. Safe for a second process (the CLI) to write
 * while the service runs: every read goes to the database, and the article feed is ordered by `seq`,
 * which SQLite assigns in commit order.
 */
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { monotonicFactory } from 'ulid';
import type { Tier } from '../../contract/index.js';
import { conformArticle, type StoredArticle } from '../../domain/articles.js';
import { nextPeriodEnd, planOf, toIso, type AccountRecord } from '../../domain/tiers.js';
import type { CarrierRecord, FeedEntry, ItemOutcome, ItemRecord, KeyInfo, KeyRecord, ListQuery, NearDuplicateRule, NewArticle, PollOutcome, SourcedItem, SourceRecord, Store, UrgencySetting, WebhookAttempt, WebhookEndpoint, WebhookState } from '../ports/index.js';
import { defaultNearRule } from '../ports/near-rule.js';
import { ingestInSlices, INGEST_SLICES, type SliceOptions } from '../ports/sources-plan.js';
import { IngestThread } from './ingest-thread.js';
import { IDENTITY_MIGRATION, SOURCES_MIGRATION, SqliteSources } from './sources.js';
import { SqliteWebhooks, WEBHOOKS_MIGRATION } from './webhooks.js';
import { affordableTerms, fts5Query, lexicalTerms, MAX_TERM_ARTICLES } from '../ports/lexical-query.js';
import { randomId, receiveStamp } from '../ports/ids.js';
import { listShape, listSql, listValues, normaliseTickers, shapeKey, tickerRows, type ListShape } from '../ports/list-query.js';
import { toAccount, toArticle, type AccountRow, type ArticleRow } from '../ports/rows.js';

/** Exported for the migration tests (rewinding to an earlier version); user_version counts the applied ones. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     tier TEXT NOT NULL,
     period_end TEXT,
     cancelled_at TEXT,
     created_at TEXT NOT NULL
   );
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     key_hash TEXT NOT NULL UNIQUE,
     active INTEGER NOT NULL DEFAULT 1,
     created_at TEXT NOT NULL
   );
   CREATE INDEX api_keys_account ON api_keys(account_id);
   CREATE TABLE articles (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     content TEXT NOT NULL,
     urgency TEXT NOT NULL,
     sentiment TEXT,
     published_at TEXT,
     received_at TEXT NOT NULL,
     tickers TEXT NOT NULL,
     source TEXT,
     url TEXT
   );
   CREATE INDEX articles_urgency_id ON articles(urgency, id);
   CREATE TABLE embed_queue (
     article_id TEXT PRIMARY KEY REFERENCES articles(id),
     enqueued_at TEXT NOT NULL
   );
   CREATE TABLE article_vectors (
     rowid INTEGER PRIMARY KEY AUTOINCREMENT,
     article_id TEXT NOT NULL REFERENCES articles(id),
     model TEXT NOT NULL,
     vector BLOB NOT NULL,
     UNIQUE (article_id, model)
   );
   CREATE INDEX article_vectors_model ON article_vectors(model, rowid);`,
  `ALTER TABLE embed_queue ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;`,
  SOURCES_MIGRATION,
  // The ticker index of the list filter (issue 12): one row per (symbol, article), urgency copied for
  // the urgency filter; filled on every insert, backfilled here from the stored tickers JSON.
  `CREATE TABLE article_tickers (
     ticker TEXT NOT NULL,
     article_id TEXT NOT NULL REFERENCES articles(id),
     urgency TEXT NOT NULL,
     PRIMARY KEY (ticker, article_id)
   ) WITHOUT ROWID;
   CREATE INDEX article_tickers_urgency ON article_tickers(ticker, urgency, article_id);
   INSERT OR IGNORE INTO article_tickers (ticker, article_id, urgency)
     SELECT json_extract(j.value, '$.ticker'), a.id, a.urgency FROM articles a, json_each(a.tickers) j
     WHERE json_extract(j.value, '$.ticker') IS NOT NULL;`,
  IDENTITY_MIGRATION,
  // Webhook endpoints (issue 21): registry, delivery cursor, failure run, leases.
  WEBHOOKS_MIGRATION,
  // The lexical index of hybrid search (issue 22): FTS5 over the article text (porter stemming, bm25
  // ranking), external content (the text is stored once, in articles). Filled by a trigger on every
  // insert, so every ingestion path fills it in the insert's own transaction; backfilled here.
  // Idempotent (IF NOT EXISTS; 'rebuild' recomputes): safe to apply again.
  `CREATE VIRTUAL TABLE IF NOT EXISTS article_fts USING fts5(content, content='articles', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2');
   CREATE TRIGGER IF NOT EXISTS article_fts_insert AFTER INSERT ON articles BEGIN
     INSERT INTO article_fts (rowid, content) VALUES (new.seq, new.content);
   END;
   CREATE TRIGGER IF NOT EXISTS article_fts_delete AFTER DELETE ON articles BEGIN
     INSERT INTO article_fts (article_fts, rowid, content) VALUES ('delete', old.seq, old.content);
   END;
   CREATE TRIGGER IF NOT EXISTS article_fts_update AFTER UPDATE OF content ON articles BEGIN
     INSERT INTO article_fts (article_fts, rowid, content) VALUES ('delete', old.seq, old.content);
     INSERT INTO article_fts (rowid, content) VALUES (new.seq, new.content);
   END;
   INSERT INTO article_fts (article_fts) VALUES ('rebuild');`,
];

/** Common query terms remembered by one store (a few hundred KB at most). */
const COMMON_TERMS_KEPT = 10_000;

function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

export interface OpenOptions {
  /**
   * How long a write waits for another process's write lock, synchronously, before failing with
   * SQLITE_BUSY. The operator CLI waits its turn (default 5 s); the service passes a few ms, so its
   * event loop never waits on another process: its background writes retry asynchronously.
   */
  busyTimeoutMs?: number;
  /** The near-duplicate rule of ingestItems (default: src/dedup/near.ts). */
  nearRule?: NearDuplicateRule;
  /** The slices of ingestItems (default: INGEST_SLICES, src/store/ports/sources-plan.ts, sized by time). */
  ingestSlices?: SliceOptions;
  /**
   * The SQLite work of ingestItems on a worker thread with its own connection (ingest-thread.ts), so it
   * never holds the event loop (the service); a file store with the default near rule only.
   */
  ingestOffThread?: boolean;
}

/** Owner-only: accounts and key hashes are not for other local users. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export function openDatabase(file: string, options: OpenOptions = {}): Database.Database {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true, mode: DIR_MODE });
    // Created owner-only before SQLite opens it; SQLite gives the -wal and -shm files the same mode.
    if (!existsSync(file)) closeSync(openSync(file, 'a', FILE_MODE));
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // FULL: an article or key the CLI reported as stored survives a power cut, not only a restart.
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  if (file !== ':memory:') tightenModes(file);
  return db;
}

/** Files of a database created by an older version (0644) become owner-only too. */
function tightenModes(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if ((statSync(f).mode & 0o077) !== 0) chmodSync(f, FILE_MODE);
    } catch {
      /* absent, or not ours to change */
    }
  }
}

interface KeyRow {
  id: string;
  account_id: string;
  active: number;
  created_at: string;
}


/** Article JSON built by SQLite itself, in the contract's field order (see ArticleStore.listJson). */
function articleJson(withTickers: boolean): string {
  const fields = ["'id', id", "'content', content", "'urgency', urgency", "'sentiment', sentiment", "'published_at', published_at", "'received_at', received_at", "'source', source", "'url', url"];
  if (withTickers) fields.push("'tickers', json(tickers)");
  return `json_object(${fields.join(', ')})`;
}

export class SqliteStore implements Store {
  readonly engine = 'sqlite' as const;
  readonly db: Database.Database;
  private readonly ulid = monotonicFactory();
  private readonly stmts;
  private readonly sources: SqliteSources;
  private readonly ingestThread: IngestThread | undefined;
  private readonly ingestSlices: SliceOptions;
  private readonly webhooks: SqliteWebhooks;
  /** List statements by shape (rows, Article JSON with or without tickers): prepared on first use. */
  private readonly listStatements = new Map<string, Database.Statement>();

  constructor(file: string, options: OpenOptions = {}) {
    this.db = openDatabase(file, options);
    const db = this.db;
    this.sources = new SqliteSources(db, (articles, at) => this.insertNow(articles, at), options.nearRule ?? defaultNearRule, options.ingestSlices);
    // The same slices as inline (INGEST_SLICES): each holds the write lock, which this connection's own
    // writes wait for a few ms at most (SERVICE_BUSY_TIMEOUT_MS).
    this.ingestSlices = options.ingestSlices ?? { maxItems: INGEST_SLICES.maxItems, budgetMs: INGEST_SLICES.budgetMs };
    this.ingestThread =
      options.ingestOffThread && file !== ':memory:' && options.nearRule === undefined
        ? new IngestThread(
            file,
            Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000)),
            {
              ingest: (items, at) => this.sources.ingestItems(items, at),
              recordPoll: (name, owner, o) => this.sources.recordPoll(name, owner, o),
              nextBatch: async (limit) => this.stmts.nextBatch.all(limit),
            },
            // While the ingest thread runs, its connection copies the WAL back into the database file (its
            // commits and a passive checkpoint when idle): a checkpoint run by a commit of this connection
            // would hold the event loop for as long as it takes to write and sync the pages.
            (running) => void (db.open && db.pragma(`wal_autocheckpoint = ${running ? 0 : 1000}`)),
          )
        : undefined;
    this.ingestThread?.warm();
    this.webhooks = new SqliteWebhooks(db);
    this.stmts = {
      getAccount: db.prepare<[string], AccountRow>('SELECT id, tier, period_end, cancelled_at FROM accounts WHERE id = ?'),
      insertAccount: db.prepare('INSERT INTO accounts (id, tier, period_end, cancelled_at, created_at) VALUES (?, ?, ?, NULL, ?)'),
      setTier: db.prepare('UPDATE accounts SET tier = ?, period_end = ?, cancelled_at = NULL WHERE id = ?'),
      cancel: db.prepare('UPDATE accounts SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL'),
      insertKey: db.prepare('INSERT INTO api_keys (id, account_id, key_hash, active, created_at) VALUES (?, ?, ?, 1, ?)'),
      findKey: db.prepare<[string], { id: string; account_id: string; active: number }>(
        'SELECT id, account_id, active FROM api_keys WHERE key_hash = ?',
      ),
      setKeyActive: db.prepare('UPDATE api_keys SET active = ? WHERE id = ?'),
      getKey: db.prepare<[string], { id: string; account_id: string; active: number }>('SELECT id, account_id, active FROM api_keys WHERE id = ?'),
      listKeys: db.prepare<[], KeyRow>('SELECT id, account_id, active, created_at FROM api_keys ORDER BY rowid'),
      listKeysOf: db.prepare<[string], KeyRow>('SELECT id, account_id, active, created_at FROM api_keys WHERE account_id = ? ORDER BY rowid'),
      insertArticle: db.prepare(
        `INSERT INTO articles (id, content, urgency, sentiment, published_at, received_at, tickers, source, url)
         VALUES (@id, @content, @urgency, @sentiment, @published_at, @received_at, @tickers, @source, @url)`,
      ),
      enqueue: db.prepare('INSERT OR IGNORE INTO embed_queue (article_id, enqueued_at) VALUES (?, ?)'),
      insertTicker: db.prepare('INSERT OR IGNORE INTO article_tickers (ticker, article_id, urgency) VALUES (@ticker, @article_id, @urgency)'),
      newestId: db.prepare<[], string>('SELECT id FROM articles ORDER BY id DESC LIMIT 1').pluck(),
      byId: db.prepare<[string], ArticleRow>('SELECT * FROM articles WHERE id = ?'),
      count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM articles'),
      feed: db.prepare<[number, number], ArticleRow>('SELECT * FROM articles WHERE seq > ? ORDER BY seq LIMIT ?'),
      latestSeq: db.prepare<[], { s: number | null }>('SELECT max(seq) AS s FROM articles'),
      enqueueMissing: db.prepare(
        `INSERT OR IGNORE INTO embed_queue (article_id, enqueued_at)
         SELECT a.id, ? FROM articles a
         WHERE NOT EXISTS (SELECT 1 FROM article_vectors v WHERE v.article_id = a.id AND v.model = ?)`,
      ),
      nextBatch: db.prepare<[number], { id: string; content: string }>(
        `SELECT a.id, a.content FROM embed_queue q JOIN articles a ON a.id = q.article_id
         ORDER BY q.enqueued_at, q.article_id LIMIT ?`,
      ),
      storeVector: db.prepare('INSERT OR REPLACE INTO article_vectors (article_id, model, vector) VALUES (?, ?, ?)'),
      dequeue: db.prepare('DELETE FROM embed_queue WHERE article_id = ?'),
      deferEmbedding: db.prepare('UPDATE embed_queue SET attempts = attempts + 1, enqueued_at = ? WHERE article_id = ? RETURNING attempts'),
      queueLength: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM embed_queue'),
      // LIMIT -1: no limit (SQLite), for a call without one.
      // bm25() is lower for a better match: negated, so a higher score is better (as cosine).
      lexical: db.prepare<[string, number], { id: string; score: number }>(
        `SELECT a.id AS id, -bm25(article_fts) AS score FROM article_fts JOIN articles a ON a.seq = article_fts.rowid
         WHERE article_fts MATCH ? ORDER BY bm25(article_fts), a.id DESC LIMIT ?`,
      ),
      termArticles: db.prepare<[string, number], { n: number }>(
        'SELECT count(*) AS n FROM (SELECT 1 FROM article_fts WHERE article_fts MATCH ? LIMIT ?)',
      ),
      vectorsAfter: db.prepare<[string, number, number], { rowid: number; article_id: string; vector: Buffer }>(
        'SELECT rowid, article_id, vector FROM article_vectors WHERE model = ? AND rowid > ? ORDER BY rowid LIMIT ?',
      ),
    };
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
   * so the CLI (one command per process) is its user. Inside a transaction, `fn` runs in it.
   */
  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
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

  // ---- accounts and keys ----

  async createAccount(tier: Tier, now: number, accountId = randomId('acct')): Promise<AccountRecord> {
    this.stmts.insertAccount.run(accountId, tier, planOf(tier).paid ? nextPeriodEnd(now) : null, toIso(now));
    return (await this.getAccount(accountId))!;
  }

  async getAccount(accountId: string): Promise<AccountRecord | undefined> {
    const r = this.stmts.getAccount.get(accountId);
    return r && toAccount(r);
  }

  async setTier(accountId: string, tier: Tier, now: number): Promise<AccountRecord | undefined> {
    this.stmts.setTier.run(tier, planOf(tier).paid ? nextPeriodEnd(now) : null, accountId);
    return this.getAccount(accountId);
  }

  async cancel(accountId: string, now: number): Promise<AccountRecord | undefined> {
    this.stmts.cancel.run(toIso(now), accountId);
    return this.getAccount(accountId);
  }

  async createKey(accountId: string, keyHash: string, keyId: string, now: number): Promise<void> {
    this.stmts.insertKey.run(keyId, accountId, keyHash, toIso(now));
  }

  async findKey(keyHash: string): Promise<KeyRecord | undefined> {
    const r = this.stmts.findKey.get(keyHash);
    return r && { keyId: r.id, accountId: r.account_id, active: r.active === 1 };
  }

  async setKeyActive(keyId: string, active: boolean): Promise<KeyRecord | undefined> {
    this.stmts.setKeyActive.run(active ? 1 : 0, keyId);
    const r = this.stmts.getKey.get(keyId);
    return r && { keyId: r.id, accountId: r.account_id, active: r.active === 1 };
  }

  async listKeys(accountId?: string): Promise<KeyInfo[]> {
    const rows = accountId === undefined ? this.stmts.listKeys.all() : this.stmts.listKeysOf.all(accountId);
    return rows.map((r) => ({ keyId: r.id, accountId: r.account_id, active: r.active === 1, createdAt: r.created_at }));
  }

  // ---- articles ----

  async insert(articles: NewArticle[], at: number | (() => number)): Promise<StoredArticle[]> {
    return this.insertNow(articles, at);
  }

  /** `insert`, synchronously: inside another write transaction (the source ingest), it joins it. */
  insertNow(articles: NewArticle[], at: number | (() => number)): StoredArticle[] {
    const out: StoredArticle[] = [];
    const write = () => {
      // Inside the transaction, which holds the write lock: no other process commits in between.
      const { receivedMs, nextId } = receiveStamp(at, typeof at === 'number' ? undefined : this.stmts.newestId.get(), this.ulid);
      const receivedAt = new Date(receivedMs).toISOString();
      for (const a of articles) {
        const article = conformArticle(a);
        const id = nextId();
        const row = {
          id,
          content: article.content,
          urgency: article.urgency,
          sentiment: article.sentiment,
          published_at: article.published_at,
          received_at: receivedAt,
          tickers: JSON.stringify(article.tickers),
          source: article.source ?? null,
          url: article.url ?? null,
        };
        this.stmts.insertArticle.run(row);
        this.stmts.enqueue.run(id, receivedAt);
        for (const t of tickerRows([{ id, urgency: article.urgency, tickers: article.tickers }])) this.stmts.insertTicker.run(t);
        out.push({ id, content: article.content, urgency: article.urgency, sentiment: article.sentiment, published_at: article.published_at, received_at: receivedAt, source: row.source, url: row.url, tickers: article.tickers });
      }
    };
    // IMMEDIATE: take the write lock before reading the clock and the newest id.
    this.db.transaction(write).immediate();
    return out;
  }

  /** The statement of one list shape, prepared once: `select` `rows` (ArticleRow), `full` or `public` (Article JSON). */
  private listStatement(kind: 'rows' | 'full' | 'public', shape: ListShape): Database.Statement {
    const key = `${kind}:${shapeKey(shape)}`;
    let st = this.listStatements.get(key);
    if (!st) {
      const select = kind === 'rows' ? '*' : articleJson(kind === 'full');
      st = this.db.prepare(listSql(select, shape, (name) => `@${name}`));
      if (kind !== 'rows') st.pluck();
      this.listStatements.set(key, st);
    }
    return st;
  }

  /** The SQL of a list page and SQLite's plan for it (EXPLAIN QUERY PLAN), for tests and the docs. */
  explainList(q: ListQuery): { sql: string; plan: string[] } {
    const query = normaliseTickers(q);
    const sql = listSql('*', listShape(query), (name) => `@${name}`);
    const plan = this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(listValues(query)) as { detail: string }[];
    return { sql, plan: plan.map((r) => r.detail) };
  }

  async list(q: ListQuery): Promise<StoredArticle[]> {
    const query = normaliseTickers(q);
    return (this.listStatement('rows', listShape(query)).all(listValues(query)) as ArticleRow[]).map(toArticle);
  }

  async listJson(q: ListQuery, withTickers: boolean): Promise<string[]> {
    const query = normaliseTickers(q);
    return this.listStatement(withTickers ? 'full' : 'public', listShape(query)).all(listValues(query)) as string[];
  }

  async getMany(ids: string[]): Promise<StoredArticle[]> {
    return ids.flatMap((id) => {
      const r = this.stmts.byId.get(id);
      return r ? [toArticle(r)] : [];
    });
  }

  async count(): Promise<number> {
    return this.stmts.count.get()!.n;
  }

  async feedAfter(seq: number, limit: number): Promise<FeedEntry[]> {
    return this.stmts.feed.all(seq, limit).map((r) => ({ seq: Number(r.seq), article: toArticle(r) }));
  }

  async latestSeq(): Promise<number> {
    return this.stmts.latestSeq.get()!.s ?? 0;
  }

  // ---- vectors ----

  async enqueueMissing(model: string): Promise<number> {
    return this.stmts.enqueueMissing.run(new Date().toISOString(), model).changes;
  }

  async nextBatch(limit: number): Promise<{ id: string; content: string }[]> {
    if (this.ingestThread) return this.ingestThread.nextBatch(limit);
    return this.stmts.nextBatch.all(limit);
  }

  async storeVectors(model: string, vectors: { id: string; vector: Float32Array }[]): Promise<void> {
    this.db.transaction(() => {
      for (const { id, vector } of vectors) {
        this.stmts.storeVector.run(id, model, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
        this.stmts.dequeue.run(id);
      }
    })();
  }

  async deferEmbedding(ids: string[], now: number, maxAttempts: number): Promise<string[]> {
    const dropped: string[] = [];
    this.db.transaction(() => {
      for (const id of ids) {
        const row = this.stmts.deferEmbedding.get(new Date(now).toISOString(), id) as { attempts: number } | undefined;
        if (row && row.attempts >= maxAttempts) {
          this.stmts.dequeue.run(id);
          dropped.push(id);
        }
      }
    })();
    return dropped;
  }

  async queueLength(): Promise<number> {
    return this.stmts.queueLength.get()!.n;
  }

  // ---- sources (sqlite/sources.ts) ----

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
    if (this.ingestThread) return this.ingestThread.recordPoll(name, owner, outcome);
    return this.sources.recordPoll(name, owner, outcome);
  }
  registryVersion(): Promise<number> {
    return this.sources.registryVersion();
  }
  ingestItems(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]> {
    const thread = this.ingestThread;
    if (thread === undefined || items.length === 0) return this.sources.ingestItems(items, at);
    // The same slices, each one transaction on the worker thread.
    return ingestInSlices(items, (slice) => thread.ingestSlice(slice, at), this.ingestSlices);
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

  /** Query terms found in more than MAX_TERM_ARTICLES articles (at most COMMON_TERMS_KEPT of them). */
  private readonly commonTerms = new Set<string>();

  async lexicalSearch(query: string, limit: number): Promise<{ id: string; score: number }[]> {
    if (limit <= 0) return [];
    // Each term's article count, bounded (a doclist walk stops at the cap): common words are dropped.
    // Articles are only ever added, so a term past the cap stays past it: remembered, never walked again.
    const all = lexicalTerms(query);
    const counts = all.map((t) => {
      if (this.commonTerms.has(t)) return MAX_TERM_ARTICLES + 1;
      const n = this.stmts.termArticles.get(fts5Query([t]), MAX_TERM_ARTICLES + 1)!.n;
      if (n > MAX_TERM_ARTICLES && this.commonTerms.size < COMMON_TERMS_KEPT) this.commonTerms.add(t);
      return n;
    });
    const terms = affordableTerms(all, counts);
    if (terms.length === 0) return [];
    return this.stmts.lexical.all(fts5Query(terms), limit);
  }

  async vectorsAfter(model: string, afterRowid: number, limit?: number): Promise<{ rowid: number; id: string; vector: Float32Array }[]> {
    return this.stmts.vectorsAfter.all(model, afterRowid, limit ?? -1).map((r) => {
      const copy = new Uint8Array(r.vector.byteLength);
      copy.set(r.vector);
      return { rowid: r.rowid, id: r.article_id, vector: new Float32Array(copy.buffer) };
    });
  }

  // ---- webhooks (sqlite/webhooks.ts) ----

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
