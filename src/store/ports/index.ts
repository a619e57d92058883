/** Storage ports: the service depends on these; each engine (SQLite, PostgreSQL) implements each port in a file of its own. */
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
   * Adds articles in one write transaction, queues them for embedding; returns them with `id` and
   * `received_at`. With a clock (production: the CLI, the service), the receive time is read inside the
   * transaction, once it holds the write lock, and never earlier than the newest stored article: the
   * order by `id`, by `received_at` and by commit agree across processes. A number is a fixed receive
   * time used as given (fixtures, the demo's back-dated sample archive).
   */
  insert(articles: NewArticle[], at: number | (() => number)): Promise<StoredArticle[]>;
  /**
   * Newest first by id (= by received_at), or oldest first with `ascending`, between the bounds of the
   * query, filtered by urgency and tickers; at most `limit` (clamped to the contract's bounds).
   */
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
  /**
   * The vectors of `model` stored after `afterRowid`, by increasing rowid, for the in-memory index:
   * every one, or the first `limit` (a positive integer) when given, so a large archive loads in pages.
   */
  vectorsAfter(
    model: string,
    afterRowid: number,
    limit?: number,
  ): Promise<{ rowid: number; id: string; vector: Float32Array }[]>;
  /**
   * The lexical half of hybrid search: up to `limit` articles whose text has words of `query` (stemmed;
   * stop-words ignored, see src/search/lexical.ts), best keyword match first (SQLite FTS5 bm25,
   * PostgreSQL ts_rank_cd; a higher score is better), equal scores newer first. Any `query` text is
   * safe (never a syntax error); one with no indexable word gives `[]`. Independent of the model: an
   * article is found by its words as soon as it is stored.
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

/** One item to store from a source (poll or push). */
export interface SourcedItem {
  source: string;
  /** Stable per-source id: the guid, else the canonical URL, else a hash of title+date (src/sources/pipeline.ts). */
  externalId: string;
  canonicalUrl: string | null;
  /** Already enriched: content, urgency, sentiment, tickers, published_at, source, url. */
  article: NewArticle;
  /** Near-duplicate keys of the content (src/dedup/near.ts). */
  nearKeys: string[];
  /**
   * The same source's same headline and published time (src/ingest/identity.ts repeatKey): recorded per
   * source beside the external ids. An undated key (`isUndatedRepeatKey`) matches within the near window only.
   */
  repeatKey?: string | null;
}

/**
 * Why an item is a duplicate: `same-item` (same source and id), `same-url` (same canonical link, any
 * source), `same-headline` (the same source's same headline and published time under another id or
 * link), `near-duplicate` (the same story from another source within the near-duplicate window).
 */
export type DuplicateReason = 'same-item' | 'same-url' | 'same-headline' | 'near-duplicate';

/**
 * `failed`: the item's own dedup step threw (an unexpected error, never a validation error): nothing of it
 * was written, and the other items of the batch went on (`errClass`: the error's class, src/store/ports/errors.ts).
 */
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

/** One item a source offered that resolved to an article: its id at the source, its canonical link, when last seen, why. */
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
  /** Leases up to `limit` due sources (unpaused, nextPollAt <= now or null, no live lease) to `owner` for `leaseMs`. Exactly one owner holds a source at a time, across processes. */
  claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<SourceRecord[]>;
  /** Records a poll's outcome (counters are added), sets the next poll time, releases the lease if `owner` still holds it. */
  recordPoll(name: string, owner: string, outcome: PollOutcome): Promise<void>;
  /** A number that changes whenever the registry changes (add/pause/resume/remove/edit): the poller checks it cheaply. */
  registryVersion(): Promise<number>;
  /**
   * Exact dedup (same (source, externalId) or same canonical URL within 30 days), near dedup (a stored article
   * sharing a near key within NEAR_DUPLICATE_WINDOW_MS whose content isNearDuplicate: the new source is recorded
   * as a carrier of that article), then insert of the rest: in write transactions of a slice of the items each
   * (src/store/ports/ingest-slice.ts INGEST_SLICE_ITEMS: a large batch never holds the event loop or the write
   * lock for long), each race-free across processes; a later slice sees the earlier ones as stored. Returns one
   * outcome per item, in order. Items are never stored twice across restarts. An item whose dedup step throws is
   * answered `failed` and left out; the others are stored all the same.
   */
  ingestItems(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]>;
  /**
   * Records that `source` offered the items of these external ids without any text (nothing to store),
   * as seen at `now` (kept and pruned as the other records), and answers how many of them it had not
   * offered before: a feed that keeps listing such an item counts it once, not at every poll.
   */
  recordTextlessItems(source: string, externalIds: string[], now: number): Promise<number>;
  /** The sources that carried an article (the first one first). */
  carriersOf(articleId: string): Promise<CarrierRecord[]>;
  /** The items (source, external id) that resolved to an article, oldest first; repeat keys left out. */
  itemsOf(articleId: string): Promise<ItemRecord[]>;
  /** Drops exact-dedup records not seen for `olderThanMs` (30-day retention; returns how many) and near keys older than the near window. */
  pruneSeen(olderThanMs: number, now: number): Promise<number>;
}

/** `active`: delivered; `paused`: by an operator or after 24 h of failures (see `pausedReason`); `disabled`: the receiver answered 410. */
export type WebhookState = 'active' | 'paused' | 'disabled';

/** One signing secret of an endpoint as stored (sealed by src/webhooks/secrets.ts); `expiresAt` set while a rotation overlaps. */
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
  /** Newest first; more than one only during a rotation (those that sign: domain/webhook-secrets.ts, `signingSecrets`). */
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
  /** `secret` becomes the first; at most PREVIOUS_SECRETS_MAX others keep signing until `now + overlapMs` (the oldest beyond it and expired ones are dropped). */
  rotateSecret(id: string, secret: string, now: number, overlapMs: number): Promise<WebhookEndpoint | undefined>;
  /**
   * Leases (or renews) up to `limit` active endpoints to `owner` until `now + leaseMs`: those with no live
   * lease and those `owner` already holds. Exactly one owner holds an endpoint at a time, across processes.
   */
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

/**
 * What the public status page is built from, shared by every instance (src/status): the minutes some
 * instance was running, each instance's live figures per minute, the incidents, and the last report
 * built (one row: every instance serves the same one).
 */
export interface StatusStore {
  /** Records that an instance ran during `minute` (epoch minutes); several instances record it once. */
  markMinute(minute: number): Promise<void>;
  /** Recorded minutes per UTC day (epoch days) from `sinceDay` on, by day; days with none are absent. */
  minutesByDay(sinceDay: number): Promise<{ day: number; minutes: number }[]>;
  /** Sets (replaces) an instance's figures of one minute: opaque JSON text to the store. */
  putSample(instance: string, minute: number, sample: string): Promise<void>;
  /** Every instance's samples from `sinceMinute` on, by minute. */
  samples(sinceMinute: number): Promise<{ instance: string; minute: number; sample: string }[]>;
  /**
   * Opens an automatic incident for `component` unless one is open (at most one open automatic incident
   * per component, across processes); true when this call opened it.
   */
  open(component: string, cause: StatusCause, at: number): Promise<boolean>;
  /** Ends the open automatic incident of `component` at `at`; true when there was one. */
  close(component: string, at: number): Promise<boolean>;
  /** Adds an operator's note (an incident of kind `note`, open until resolved). */
  note(component: string, message: string, at: number): Promise<IncidentRecord>;
  /** Ends the open note `id`, or every open note; the notes ended. */
  resolve(at: number, id?: number): Promise<IncidentRecord[]>;
  /** Incidents open now or ended at or after `sinceMs`, newest start first (id breaks ties, higher first). */
  incidents(sinceMs: number): Promise<IncidentRecord[]>;
  /** The last report published, if any. */
  report(): Promise<{ generatedAt: number; body: string } | undefined>;
  /**
   * Publishes a report if the stored one is still the one generated at `previous` (null: none stored):
   * true when it was written, false when another instance published first.
   */
  publish(body: string, generatedAt: number, previous: number | null): Promise<boolean>;
  /** Drops recorded minutes and ended incidents older than `beforeMs` (the history), samples older than `samplesBeforeMs`. */
  prune(beforeMs: number, samplesBeforeMs: number): Promise<void>;
}

export type { Freshness, StoreChanges, WakeSubscription } from './changes.js';
import type { StoreChanges } from './changes.js';

/** The ports of one store, each one object of its engine's adapter (one file per port). */
export interface StorePorts {
  readonly accounts: AccountStore;
  readonly articles: ArticleStore;
  readonly vectors: VectorStore;
  readonly sources: SourceStore;
  readonly webhooks: WebhookStore;
  readonly status: StatusStore;
}

/**
 * The whole store as the composition root and the CLI see it: a record of its ports, on one engine (the
 * embedded SQLite file, or PostgreSQL when DATABASE_URL is set). Nothing is forwarded from one object to
 * another: a caller takes the port it uses (`store.articles.list(…)`).
 */
export interface Store extends StorePorts {
  readonly engine: 'sqlite' | 'postgres';
  /** How callers learn that the store changed (a commit by any process), whatever the engine. */
  readonly changes: StoreChanges;
  /**
   * Runs `fn` in one write transaction: every store call made through `tx` (the same record of ports)
   * is committed together or rolled back when `fn` throws. SQLite: BEGIN IMMEDIATE (waits for the write
   * lock first, up to the busy timeout); PostgreSQL: one pooled connection in BEGIN … COMMIT. A
   * transaction inside `tx` runs in the same transaction.
   */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Resolves when the engine answers (readiness); rejects like any store call otherwise. */
  ping(): Promise<void>;
  /**
   * Applied and latest schema migrations, for an engine whose schema can be behind the code (PostgreSQL:
   * another instance or `fns migrate` applies them); absent where opening the store migrates it (SQLite).
   */
  migrationStatus?(): Promise<{ applied: number; latest: number }>;
  close(): Promise<void>;
}

/** What a transaction's `fn` is given: the ports, bound to the transaction, and nested transactions. */
export interface StoreTx extends StorePorts {
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
}
