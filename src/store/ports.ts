/** Storage ports: the service depends on these, adapters (SQLite now, PostgreSQL later) implement them. */
import type { Tier, Urgency, ArticleSentiment, TickerSentiment } from '../contract/index.js';
import type { AccountRecord } from '../domain/tiers.js';
import type { StoredArticle } from '../domain/articles.js';

export interface KeyRecord {
  keyId: string;
  accountId: string;
  active: boolean;
}

/** A key as the operator sees it (`fns keys list`, `fns accounts show`): never the key or its hash. */
export interface KeyInfo extends KeyRecord {
  createdAt: string;
}

export interface AccountStore {
  createAccount(tier: Tier, now: number, accountId?: string): Promise<AccountRecord>;
  getAccount(accountId: string): Promise<AccountRecord | undefined>;
  /** Start, upgrade or downgrade: clears any cancellation; a paid tier gets a new billing period. */
  setTier(accountId: string, tier: Tier, now: number): Promise<AccountRecord | undefined>;
  /** Cancellation takes effect now: the account is `expired` for the grace window. */
  cancel(accountId: string, now: number): Promise<AccountRecord | undefined>;
  /** Stores a key by its hash only. */
  createKey(accountId: string, keyHash: string, keyId: string, now: number): Promise<void>;
  findKey(keyHash: string): Promise<KeyRecord | undefined>;
  setKeyActive(keyId: string, active: boolean): Promise<KeyRecord | undefined>;
  /** The keys of one account, or of every account, in creation order. */
  listKeys(accountId?: string): Promise<KeyInfo[]>;
}

/** An article as it enters the archive; the store assigns `id` and `received_at`. */
export interface NewArticle {
  content: string;
  urgency: Urgency;
  sentiment: ArticleSentiment;
  published_at: string | null;
  tickers: TickerSentiment[];
  source?: string | null;
  url?: string | null;
}

export interface ListQuery {
  /** Exclusive lower bound on received_at, epoch ms. */
  afterMs: number;
  urgency?: Urgency;
  limit: number;
}

export interface FeedEntry {
  seq: number;
  article: StoredArticle;
}

export interface ArticleStore {
  /**
   * Adds articles in one write transaction, queues them for embedding; returns them with `id` and
   * `received_at`. With a clock (production: the CLI, the service), the receive time is read inside the
   * transaction, once it holds the write lock, and never earlier than the newest stored article: the
   * order by `id`, by `received_at` and by commit agree across processes. A number is a fixed receive
   * time used as given (fixtures, the demo's back-dated sample archive).
   */
  insert(articles: NewArticle[], at: number | (() => number)): Promise<StoredArticle[]>;
  /** Newest first by received_at. */
  list(query: ListQuery): Promise<StoredArticle[]>;
  /**
   * The same articles as `list`, each already serialised as the contract's Article JSON (fields in
   * contract order; `tickers` only when asked for): the hot path of GET /v1/news.
   */
  listJson(query: ListQuery, withTickers: boolean): Promise<string[]>;
  getMany(ids: string[]): Promise<StoredArticle[]>;
  count(): Promise<number>;
  /** The change feed: articles inserted after `seq` (by any process), in insertion order. */
  feedAfter(seq: number, limit: number): Promise<FeedEntry[]>;
  latestSeq(): Promise<number>;
}

export interface VectorStore {
  /** Queues every article that has no vector of `model` (e.g. after a model change). */
  enqueueMissing(model: string): Promise<number>;
  /**
   * The oldest queued articles, leased for `leaseMs` (default: the adapter's, e.g. 2 minutes): another
   * process's worker skips leased rows, so with several instances each article is embedded once; a
   * lease that expires (its worker died) is taken again. `storeVectors` / `deferEmbedding` end the
   * lease. The embedded store (one service process) may ignore leases.
   */
  nextBatch(limit: number, leaseMs?: number): Promise<{ id: string; content: string }[]>;
  /** Stores vectors and removes their articles from the queue, atomically. */
  storeVectors(model: string, vectors: { id: string; vector: Float32Array }[]): Promise<void>;
  queueLength(): Promise<number>;
  /**
   * Articles whose text the embedder refused: counted and moved to the back of the queue; after
   * `maxAttempts` they leave the queue (returned), so one bad article never blocks the others.
   */
  deferEmbedding(ids: string[], now: number, maxAttempts: number): Promise<string[]>;
  /** Every vector of `model` stored after `afterRowid`, for the in-memory index. */
  vectorsAfter(model: string, afterRowid: number): Promise<{ rowid: number; id: string; vector: Float32Array }[]>;
}

/**
 * The whole store as the composition root and the CLI see it: every port, on one engine (the embedded
 * SQLite file, or PostgreSQL when DATABASE_URL is set).
 */
export interface Store extends AccountStore, ArticleStore, VectorStore {
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in one write transaction: every store call made through `tx` is committed together or
   * rolled back when `fn` throws. SQLite: BEGIN IMMEDIATE (waits for the write lock first, up to the
   * busy timeout); PostgreSQL: one pooled connection in BEGIN … COMMIT. A transaction inside `tx` runs
   * in the same transaction.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /** Resolves when the engine answers (readiness); rejects like any store call otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
