/**
 * Storage ports: the service depends on these; each engine (SQLite, PostgreSQL) implements each port in a file of its
 * own.
 */
import type { Tier, Urgency, ArticleSentiment } from '../../contract/index.js';
import type { AccountRecord } from '../../domain/tiers.js';
import type { StoredArticle, TickerInput } from '../../domain/articles.js';
import type { components } from '../../../generated/openapi.js';

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
  /** Each with its relevance, or without (then 1: the article is about it). */
  tickers: TickerInput[];
  source?: string | null;
  url?: string | null;
}

export interface ListQuery {
  /** Exclusive lower bound on received_at, epoch ms (the `since` / lookback bound). */
  afterMs: number;
  /** Cursor: only articles with a greater id (exclusive); the lower bound is the larger of this and `afterMs`. */
  afterId?: string;
  /** Cursor: only articles with a smaller id (exclusive). */
  beforeId?: string;
  /** Oldest first (used with `afterId`); newest first otherwise. */
  ascending?: boolean;
  /** Only articles about at least one of these symbols (the ticker index). */
  tickers?: string[];
  /** With `tickers`: the least relevance one of them must have (the contract's default when absent). */
  minRelevance?: number;
  urgency?: Urgency;
  limit: number;
}

export interface FeedEntry {
  seq: number;
  article: StoredArticle;
}

export interface ArticleStore {
  /**
   * One write transaction, queueing for embedding. A clock is read under the write lock, never below the newest
   * article, so id, received_at and commit orders agree across processes; a number is used as given.
   */
  insert(articles: NewArticle[], at: number | (() => number)): Promise<StoredArticle[]>;
  /** Newest first by id (= by received_at), or oldest first with `ascending`; at most `limit` (contract-clamped). */
  list(query: ListQuery): Promise<StoredArticle[]>;
  /** The articles of `list` already serialised as the contract's Article JSON: the hot path of GET /v1/news. */
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
   * The oldest queued, leased for `leaseMs` so each is embedded once across instances; an expired lease is taken
   * again, and `storeVectors` / `deferEmbedding` end it. SQLite may ignore leases.
   */
  nextBatch(limit: number, leaseMs?: number): Promise<{ id: string; content: string }[]>;
  /** Stores vectors and removes their articles from the queue, atomically. */
  storeVectors(model: string, vectors: { id: string; vector: Float32Array }[]): Promise<void>;
  queueLength(): Promise<number>;
  /** Refused texts go to the back of the queue; after `maxAttempts` they leave it (returned): none blocks the rest. */
  deferEmbedding(ids: string[], now: number, maxAttempts: number): Promise<string[]>;
  /** Vectors of `model` after `afterRowid`, by increasing rowid; a positive `limit` loads a large archive in pages. */
  vectorsAfter(
    model: string,
    afterRowid: number,
    limit?: number,
  ): Promise<{ rowid: number; id: string; vector: Float32Array }[]>;
  /**
   * Lexical half of hybrid search, independent of the model: up to `limit` articles with words of `query`
   * (src/search/lexical.ts), higher score first, ties newer first. Never a syntax error; no indexable word: `[]`.
   */
  lexicalSearch(query: string, limit: number): Promise<{ id: string; score: number }[]>;
}

/** A source's urgency: fixed, or `auto` (derived from the text by src/enrich). */
export type { UrgencySetting } from '../../enrich/index.js';
import type { UrgencySetting } from '../../enrich/index.js';

/** A registered source as the operator and the poller see it. Times are ISO 8601 UTC text. */
export interface SourceRecord {
  name: string;
  url: string;
  everyMs: number;
  urgency: UrgencySetting;
  paused: boolean;
  createdAt: string;
  etag: string | null;
  lastModified: string | null;
  lastPollAt: string | null;
  /** The last poll that succeeded (ok or not modified). */
  lastOkAt: string | null;
  /** The first failed poll of the current run of failures; null once a poll succeeds. */
  failingSince: string | null;
  /** The last poll that stored at least one new article. */
  lastArticleAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  nextPollAt: string | null;
  failures: number;
  minIntervalMs: number | null;
  itemsSeen: number;
  itemsIngested: number;
  itemsDeduplicated: number;
}

/** What one poll of a source found (times are epoch ms); counters are added to the source's totals. */
export interface PollOutcome {
  at: number;
  status: number | null;
  error: string | null;
  etag: string | null;
  lastModified: string | null;
  nextPollAt: number;
  failures: number;
  minIntervalMs: number | null;
  seen: number;
  ingested: number;
  deduplicated: number;
}

export interface SourcedItem {
  source: string;
  /** Stable per-source id: the guid, else the canonical URL, else a hash of title+date (src/sources/pipeline.ts). */
  externalId: string;
  canonicalUrl: string | null;
  /** Already enriched: content, urgency, sentiment, tickers, published_at, source, url. */
  article: NewArticle;
  /** Near-duplicate keys of the content (src/dedup/near.ts). */
  nearKeys: string[];
  /** Same source, headline and published time (src/ingest/identity.ts); undated: matches in the near window only. */
  repeatKey?: string | null;
}

/**
 * `same-item`: same source and id; `same-url`: same canonical link, any source; `same-headline`: the source's same
 * headline and published time; `near-duplicate`: the same story from another source within the near window.
 */
export type DuplicateReason = 'same-item' | 'same-url' | 'same-headline' | 'near-duplicate';

/** `failed`: the item's dedup step threw unexpectedly; nothing of it was written and the rest of the batch went on. */
export type ItemOutcome =
  | { status: 'stored'; id: string; received_at: string }
  | { status: 'duplicate'; reason: DuplicateReason; id: string }
  | { status: 'failed'; errClass: string };

/** One source that carried an article: the first (reason null) or a later one, with why it was merged. */
export interface CarrierRecord {
  source: string;
  url: string | null;
  at: string;
  reason: DuplicateReason | null;
}

/**
 * One item a source offered that resolved to an article: its id at the source, its canonical link, when last seen, why.
 */
export interface ItemRecord {
  source: string;
  externalId: string;
  url: string | null;
  seenAt: string;
  /** null: the item that was stored. */
  reason: DuplicateReason | null;
}

/** Decides whether two contents are the same story (src/dedup/near.ts isNearDuplicate) and the window it applies in. */
export interface NearDuplicateRule {
  windowMs: number;
  isNearDuplicate(a: string, b: string): boolean;
}

export interface SourceStore {
  /** A duplicate name throws SourceExistsError (src/store/ports/errors.ts). */
  add(s: { name: string; url: string; everyMs: number; urgency: UrgencySetting }, now: number): Promise<SourceRecord>;
  /** In creation order. */
  list(): Promise<SourceRecord[]>;
  get(name: string): Promise<SourceRecord | undefined>;
  setPaused(name: string, paused: boolean, now: number): Promise<SourceRecord | undefined>;
  remove(name: string): Promise<boolean>;
  /**
   * Leases up to `limit` due sources (unpaused, nextPollAt <= now or null, no live lease) to `owner` for `leaseMs`.
   * Exactly one owner holds a source at a time, across processes.
   */
  claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<SourceRecord[]>;
  /**
   * Records a poll's outcome (counters are added), sets the next poll time, releases the lease if `owner` still holds
   * it.
   */
  recordPoll(name: string, owner: string, outcome: PollOutcome): Promise<void>;
  /**
   * A number that changes whenever the registry changes (add/pause/resume/remove/edit): the poller checks it cheaply.
   */
  registryVersion(): Promise<number>;
  /**
   * Exact dedup (source + externalId, or canonical URL within 30 days), near dedup (the new source becomes a
   * carrier), then insert; one write transaction per slice of INGEST_SLICE_ITEMS, so a large batch never holds
   * the event loop or the write lock for long. Race-free across processes and restarts; one outcome per item, in order.
   */
  ingestItems(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]>;
  /** Records items offered without text; returns how many are new, so a feed that keeps listing one counts it once. */
  recordTextlessItems(source: string, externalIds: string[], now: number): Promise<number>;
  /** The sources that carried an article (the first one first). */
  carriersOf(articleId: string): Promise<CarrierRecord[]>;
  /** The items (source, external id) that resolved to an article, oldest first; repeat keys left out. */
  itemsOf(articleId: string): Promise<ItemRecord[]>;
  /**
   * Drops exact-dedup records not seen for `olderThanMs` (30-day retention; returns how many) and near keys older than
   * the near window.
   */
  pruneSeen(olderThanMs: number, now: number): Promise<number>;
}

/**
 * `active`: delivered; `paused`: by an operator or after 24 h of failures (see `pausedReason`); `disabled`: the
 * receiver answered 410.
 */
export type WebhookState = 'active' | 'paused' | 'disabled';

/**
 * One signing secret of an endpoint as stored (sealed by src/webhooks/secrets.ts); `expiresAt` set while a rotation
 * overlaps.
 */
export interface WebhookSecretRecord {
  secret: string;
  expiresAt: number | null;
}

/** A webhook endpoint as the dispatcher and the operator see it. Times are epoch milliseconds, as in WebhookAttempt. */
export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  /** Only articles about one of these symbols (max accounts); null = every article. */
  tickers: string[] | null;
  /** With `tickers`: the least relevance (null: the contract's default). */
  minRelevance: number | null;
  /**
   * Newest first; more than one only during a rotation (those that sign: domain/webhook-secrets.ts, `signingSecrets`).
   */
  secrets: WebhookSecretRecord[];
  state: WebhookState;
  pausedReason: string | null;
  /** The feed `seq` of the last article delivered (or skipped by the filters): the backlog is what follows it. */
  cursor: number;
  /** Failed attempts in a row on the article after the cursor. */
  failures: number;
  firstFailureAt: number | null;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
}

/** What one delivery attempt (or a run of filtered-out articles) decided, written by `recordAttempt`. */
export interface WebhookAttempt {
  at: number;
  /** The cursor moves forward to this seq (never back); null: it stays. */
  cursor: number | null;
  /** Null when no request was sent (articles skipped by the filters). */
  status: number | null;
  error: string | null;
  ok: boolean | null;
  failures: number;
  firstFailureAt: number | null;
  nextAttemptAt: number | null;
  state: WebhookState;
  pausedReason: string | null;
}

/** What `webhooks.add` stores: the endpoint, its filter and its sealed secret. */
export interface NewWebhook {
  id: string;
  accountId: string;
  url: string;
  tickers: string[] | null;
  /** With `tickers`: the least relevance (null or absent: the contract's default). */
  minRelevance?: number | null;
  secret: string;
}

export interface WebhookStore {
  /** The new endpoint's cursor is the end of the feed at commit: every article stored after it is delivered. */
  add(e: NewWebhook, now: number): Promise<WebhookEndpoint>;
  get(id: string): Promise<WebhookEndpoint | undefined>;
  /** In creation order. */
  list(accountId?: string): Promise<WebhookEndpoint[]>;
  remove(id: string): Promise<boolean>;
  /** Pause (with a reason) or resume; resuming clears the failure run and sends at once from the cursor. */
  setState(id: string, state: WebhookState, reason: string | null, now: number): Promise<WebhookEndpoint | undefined>;
  /**
   * `secret` becomes the first; at most PREVIOUS_SECRETS_MAX others keep signing until `now + overlapMs` (the oldest
   * beyond it and expired ones are dropped).
   */
  rotateSecret(id: string, secret: string, now: number, overlapMs: number): Promise<WebhookEndpoint | undefined>;
  /** Leases or renews up to `limit` active endpoints to `owner`; one owner per endpoint at a time, across processes. */
  claim(owner: string, now: number, leaseMs: number, limit: number): Promise<WebhookEndpoint[]>;
  /** Gives up every lease `owner` holds (a clean shutdown: another instance takes over at once). */
  release(owner: string): Promise<void>;
  /** Records an attempt if `owner` still holds the lease (returns false otherwise: another instance took over). */
  recordAttempt(id: string, owner: string, a: WebhookAttempt): Promise<boolean>;
}

/** Why a status component is not operational (the contract's StatusCause). */
export type StatusCause = components['schemas']['StatusCause'];

/** An incident as stored: opened automatically for a component, or an operator's note. Times are epoch ms. */
export interface IncidentRecord {
  id: number;
  /** `rest`, `stream`, `webhooks`, `search`, `source:<name>`, or `service` (a note about all of it). */
  component: string;
  kind: 'automatic' | 'note';
  cause: StatusCause;
  /** An operator's note; null for an automatic incident. */
  message: string | null;
  startedAt: number;
  endedAt: number | null;
}

/** The public status page's data, shared by all instances: minutes up, samples, incidents, the last report. */
export interface StatusStore {
  /** Records that an instance ran during `minute` (epoch minutes); several instances record it once. */
  markMinute(minute: number): Promise<void>;
  /** Recorded minutes per UTC day (epoch days) from `sinceDay` on, by day; days with none are absent. */
  minutesByDay(sinceDay: number): Promise<{ day: number; minutes: number }[]>;
  /** Sets (replaces) an instance's figures of one minute: opaque JSON text to the store. */
  putSample(instance: string, minute: number, sample: string): Promise<void>;
  /** Every instance's samples from `sinceMinute` on, by minute. */
  samples(sinceMinute: number): Promise<{ instance: string; minute: number; sample: string }[]>;
  /** Opens an automatic incident unless `component` has one open (one at most, across processes); true if this did. */
  open(component: string, cause: StatusCause, at: number): Promise<boolean>;
  /** Ends the open automatic incident of `component` at `at`; true when there was one. */
  close(component: string, at: number): Promise<boolean>;
  /** Adds an operator's note (an incident of kind `note`, open until resolved). */
  note(component: string, message: string, at: number): Promise<IncidentRecord>;
  /** Ends the open note `id`, or every open note; the notes ended. */
  resolve(at: number, id?: number): Promise<IncidentRecord[]>;
  /** Incidents open now or ended at or after `sinceMs`, newest start first (id breaks ties, higher first). */
  incidents(sinceMs: number): Promise<IncidentRecord[]>;
  report(): Promise<{ generatedAt: number; body: string } | undefined>;
  /** Publishes if the stored report is the one generated at `previous` (null: none); false: another instance won. */
  publish(body: string, generatedAt: number, previous: number | null): Promise<boolean>;
  /**
   * Drops recorded minutes and ended incidents older than `beforeMs` (the history), samples older than
   * `samplesBeforeMs`.
   */
  prune(beforeMs: number, samplesBeforeMs: number): Promise<void>;
}

export type { Freshness, StoreChanges, WakeSubscription } from './changes.js';
import type { StoreChanges } from './changes.js';

export interface StorePorts {
  readonly accounts: AccountStore;
  readonly articles: ArticleStore;
  readonly vectors: VectorStore;
  readonly sources: SourceStore;
  readonly webhooks: WebhookStore;
  readonly status: StatusStore;
}

/** The whole store: its ports on one engine; a caller takes the port it uses (`store.articles.list(…)`). */
export interface Store extends StorePorts {
  readonly engine: 'sqlite' | 'postgres';
  readonly changes: StoreChanges;
  /**
   * Runs `fn` in one write transaction (SQLite BEGIN IMMEDIATE, up to the busy timeout; PostgreSQL one pooled
   * connection): every call through `tx` commits together or rolls back if `fn` throws; a nested one joins it.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Resolves when the engine answers (readiness); rejects like any store call otherwise. */
  ping(): Promise<void>;
  /** Applied and latest migrations where the schema can lag the code (PostgreSQL); absent if open migrates (SQLite). */
  migrationStatus?(): Promise<{ applied: number; latest: number }>;
  close(): Promise<void>;
}

/** What a transaction's `fn` is given: the ports, bound to the transaction, and nested transactions. */
export interface StoreTx extends StorePorts {
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
}
