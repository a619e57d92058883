/** Every write is one IMMEDIATE transaction (write lock first): check-then-insert cannot race another process. */
import type Database from 'better-sqlite3';
import type { StoredArticle } from '../../domain/articles.js';
import type {
  CarrierRecord,
  ItemOutcome,
  ItemRecord,
  NearDuplicateRule,
  NewArticle,
  PollOutcome,
  SourcedItem,
  SourceRecord,
  SourceStore,
  UrgencySetting,
} from '../ports/index.js';
import { patiently, SourceExistsError } from '../ports/errors.js';
import { TEXTLESS_KEY } from '../ports/sources-plan.js';
import { contentCache, ingestInSlices, ingestSlice, type SliceOptions, type SliceRows } from '../ports/ingest-slice.js';
import { runSteps } from '../../runtime/steps.js';
import { REPEAT_KEY_DATED, REPEAT_KEY_UNDATED } from '../../dedup/repeat.js';
import {
  boundedPollOutcome,
  SOURCE_COLUMNS,
  toCarrier,
  toItem,
  toSource,
  type CarrierRow,
  type ItemRow,
  type SourceRow,
} from '../ports/sources-rows.js';

export const SOURCES_MIGRATION = `
  CREATE TABLE sources (
    name TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    every_ms INTEGER NOT NULL,
    urgency TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    etag TEXT,
    last_modified TEXT,
    last_poll_at INTEGER,
    last_status INTEGER,
    last_error TEXT,
    next_poll_at INTEGER,
    failures INTEGER NOT NULL DEFAULT 0,
    min_interval_ms INTEGER,
    items_seen INTEGER NOT NULL DEFAULT 0,
    items_ingested INTEGER NOT NULL DEFAULT 0,
    items_deduplicated INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE TABLE source_registry (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
  INSERT INTO source_registry (id, version) VALUES (1, 0);
  CREATE TABLE seen_items (
    source TEXT NOT NULL,
    external_id TEXT NOT NULL,
    canonical_url TEXT,
    article_id TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (source, external_id)
  ) WITHOUT ROWID;
  CREATE INDEX seen_items_url ON seen_items(canonical_url) WHERE canonical_url IS NOT NULL;
  CREATE INDEX seen_items_time ON seen_items(seen_at);
  -- One b-tree (about 20 rows per article): pruning scans it, which is rare and bounded by the 24 h window.
  CREATE TABLE near_keys (
    key TEXT NOT NULL,
    at INTEGER NOT NULL,
    article_id TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (key, at, article_id)
  ) WITHOUT ROWID;
  CREATE TABLE article_carriers (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    article_id TEXT NOT NULL,
    source TEXT NOT NULL,
    url TEXT,
    at INTEGER NOT NULL,
    UNIQUE (article_id, source)
  );`;

/**
 * Article identity: `reason` on items and carriers (null: the stored one); `source` and `url` backfilled from the
 * first carrier; a source that is no source name, or a url that is no http(s) link of at most 2,000 chars, is null.
 */
export const IDENTITY_MIGRATION = `
  ALTER TABLE seen_items ADD COLUMN reason TEXT;
  ALTER TABLE article_carriers ADD COLUMN reason TEXT;
  UPDATE article_carriers SET reason = 'near-duplicate'
    WHERE n > (SELECT min(c.n) FROM article_carriers c WHERE c.article_id = article_carriers.article_id);
  UPDATE articles SET source = (SELECT c.source FROM article_carriers c WHERE c.article_id = articles.id ORDER BY c.n LIMIT 1)
    WHERE source IS NULL;
  UPDATE articles SET url = coalesce(
      (SELECT s.canonical_url FROM seen_items s WHERE s.article_id = articles.id AND s.source = articles.source AND s.canonical_url IS NOT NULL ORDER BY s.seen_at LIMIT 1),
      url,
      (SELECT c.url FROM article_carriers c WHERE c.article_id = articles.id AND c.source = articles.source))
    WHERE source IS NOT NULL AND EXISTS (SELECT 1 FROM article_carriers c WHERE c.article_id = articles.id);
  UPDATE articles SET source = NULL
    WHERE source IS NOT NULL AND (length(source) > 64 OR source GLOB '*[^A-Za-z0-9._-]*' OR source GLOB '[._-]*');
  UPDATE articles SET url = NULL
    WHERE url IS NOT NULL AND (length(url) > 2000 OR NOT (url GLOB 'http://?*' OR url GLOB 'https://?*') OR url GLOB '*[ ' || char(9) || char(10) || char(13) || ']*');`;

export class SqliteSources implements SourceStore {
  private readonly st;
  private readonly contents = contentCache();
  private readonly rows: SliceRows;

  constructor(
    private readonly db: Database.Database,
    /** The store's insert, synchronous, joining the caller's transaction. */
    insertNow: (articles: NewArticle[], at: number | (() => number)) => StoredArticle[],
    private readonly rule: NearDuplicateRule,
    private readonly slices: SliceOptions = {},
  ) {
    this.st = {
      insert: db.prepare(
        `INSERT INTO sources (name, url, every_ms, urgency, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
      ),
      get: db.prepare<[string], SourceRow>(`SELECT ${SOURCE_COLUMNS} FROM sources WHERE name = ?`),
      list: db.prepare<[], SourceRow>(`SELECT ${SOURCE_COLUMNS} FROM sources ORDER BY rowid`),
      pause: db.prepare('UPDATE sources SET paused = 1 WHERE name = ?'),
      // Resumed: polled at once (its next poll time is now).
      resume: db.prepare('UPDATE sources SET paused = 0, next_poll_at = ? WHERE name = ?'),
      remove: db.prepare('DELETE FROM sources WHERE name = ?'),
      bump: db.prepare('UPDATE source_registry SET version = version + 1 WHERE id = 1'),
      version: db.prepare<[], number>('SELECT version FROM source_registry WHERE id = 1').pluck(),
      due: db.prepare<[number, number, number], { name: string }>(
        `SELECT name FROM sources
         WHERE paused = 0 AND (next_poll_at IS NULL OR next_poll_at <= ?) AND (lease_until IS NULL OR lease_until <= ?)
         ORDER BY coalesce(next_poll_at, 0), rowid LIMIT ?`,
      ),
      lease: db.prepare('UPDATE sources SET lease_owner = ?, lease_until = ? WHERE name = ?'),
      // A poll without an error is an ok one; one with an error starts a run of failures or continues it.
      record: db.prepare(
        `UPDATE sources SET
           last_poll_at = @at, last_status = @status, last_error = @error, etag = @etag, last_modified = @lastModified,
           last_ok_at = CASE WHEN @error IS NULL THEN @at ELSE last_ok_at END,
           failing_since = CASE WHEN @error IS NULL THEN NULL ELSE coalesce(failing_since, @at) END,
           last_article_at = CASE WHEN @ingested > 0 THEN @at ELSE last_article_at END,
           next_poll_at = @nextPollAt, failures = @failures, min_interval_ms = @minIntervalMs,
           items_seen = items_seen + @seen, items_ingested = items_ingested + @ingested,
           items_deduplicated = items_deduplicated + @deduplicated,
           lease_owner = CASE WHEN lease_owner = @owner THEN NULL ELSE lease_owner END,
           lease_until = CASE WHEN lease_owner = @owner THEN NULL ELSE lease_until END
         WHERE name = @name`,
      ),
      // Batch reads and writes take their rows as one JSON array (json_each): one statement per batch.
      seenByItem: db.prepare<[string], { source: string; external_id: string; article_id: string; seen_at: number }>(
        `SELECT s.source, s.external_id, s.article_id, s.seen_at FROM json_each(?) j
         JOIN seen_items s ON s.source = j.value ->> 0 AND s.external_id = j.value ->> 1`,
      ),
      seenByUrl: db.prepare<[string], { url: string; article_id: string | null }>(
        `SELECT j.value AS url, (SELECT article_id FROM seen_items WHERE canonical_url = j.value ORDER BY seen_at LIMIT 1) AS article_id
         FROM json_each(?) j`,
      ),
      // Per key only rows from its NEAR_KEY_FANOUT-th newest on (a second seek): a template key shared by
      // thousands of headlines reads about NEAR_KEY_FANOUT rows, not all of them.
      nearHits: db
        .prepare<[{ keys: string; from: number; skip: number }], [string, string, string, number]>(
          `SELECT n.key, n.article_id, n.source, n.at FROM json_each(@keys) j
         JOIN near_keys n ON n.key = j.value AND n.at >= coalesce(
           (SELECT c.at FROM near_keys c WHERE c.key = j.value AND c.at >= @from ORDER BY c.at DESC LIMIT 1 OFFSET @skip), @from)`,
        )
        .raw(),
      carried: db
        .prepare<[string], [string, string]>(
          `SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j
         WHERE EXISTS (SELECT 1 FROM article_carriers c WHERE c.article_id = j.value ->> 0 AND c.source = j.value ->> 1)`,
        )
        .raw(),
      contents: db.prepare<[string], { id: string; content: string }>(
        'SELECT id, content FROM articles WHERE id IN (SELECT value FROM json_each(?))',
      ),
      upsertSeen: db.prepare<[number, string]>(
        `INSERT INTO seen_items (source, external_id, canonical_url, article_id, seen_at, reason)
         SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, ?, j.value ->> 4 FROM json_each(?) j WHERE true
         ON CONFLICT (source, external_id) DO UPDATE SET seen_at = excluded.seen_at, article_id = excluded.article_id`,
      ),
      insertKeys: db.prepare<[string]>(
        'INSERT INTO near_keys (key, article_id, source, at) SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3 FROM json_each(?) j',
      ),
      insertCarriers: db.prepare<[number, string]>(
        `INSERT OR IGNORE INTO article_carriers (article_id, source, url, at, reason)
         SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, ?, j.value ->> 3 FROM json_each(?) j ORDER BY j.key`,
      ),
      carriers: db.prepare<[string], CarrierRow>(
        'SELECT source, url, at, reason FROM article_carriers WHERE article_id = ? ORDER BY n',
      ),
      items: db.prepare<[string, string, string, string, string], ItemRow>(
        `SELECT source, external_id, canonical_url, seen_at, reason FROM seen_items
         WHERE article_id = ? AND substr(external_id, 1, length(?)) <> ? AND substr(external_id, 1, length(?)) <> ?
         ORDER BY seen_at, source, external_id`,
      ),
      // Items offered without text: a record with no article under their own keys (TEXTLESS_KEY).
      textlessSeen: db
        .prepare<[string, string], number>(
          'SELECT count(*) FROM json_each(?) j JOIN seen_items s ON s.source = ? AND s.external_id = j.value',
        )
        .pluck(),
      upsertTextless: db.prepare<[string, number, string]>(
        `INSERT INTO seen_items (source, external_id, canonical_url, article_id, seen_at)
         SELECT ?, j.value, NULL, '', ? FROM json_each(?) j WHERE true
         ON CONFLICT (source, external_id) DO UPDATE SET seen_at = excluded.seen_at`,
      ),
      pruneSeen: db.prepare('DELETE FROM seen_items WHERE seen_at < ?'),
      pruneKeys: db.prepare('DELETE FROM near_keys WHERE at < ?'),
    };
    const st = this.st;
    const json = (v: unknown) => JSON.stringify(v);
    this.rows = {
      seenByItem: (keys) => st.seenByItem.all(json(keys)),
      seenByUrl: (urls) =>
        st.seenByUrl
          .all(json(urls))
          .flatMap((r) => (r.article_id === null ? [] : [{ url: r.url, articleId: r.article_id }])),
      nearHits: (keys, from, perKey) => st.nearHits.all({ keys: json(keys), from, skip: perKey - 1 }),
      carried: (pairs) => st.carried.all(json(pairs)),
      contents: (ids) => st.contents.all(json(ids)),
      insertArticles: (articles, at) => insertNow(articles, at),
      upsertSeen: (rows, now) => void st.upsertSeen.run(now, json(rows)),
      insertKeys: (rows) => void st.insertKeys.run(json(rows)),
      insertCarriers: (rows, now) => void st.insertCarriers.run(now, json(rows)),
    };
  }

  private write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  async add(
    s: { name: string; url: string; everyMs: number; urgency: UrgencySetting },
    now: number,
  ): Promise<SourceRecord> {
    return this.write(() => {
      if (this.st.insert.run(s.name, s.url, Math.trunc(s.everyMs), s.urgency, now).changes === 0)
        throw new SourceExistsError(s.name);
      this.st.bump.run();
      return toSource(this.st.get.get(s.name)!);
    });
  }

  async list(): Promise<SourceRecord[]> {
    return this.st.list.all().map(toSource);
  }

  async get(name: string): Promise<SourceRecord | undefined> {
    const r = this.st.get.get(name);
    return r && toSource(r);
  }

  async setPaused(name: string, paused: boolean, now: number): Promise<SourceRecord | undefined> {
    return this.write(() => {
      const changed = paused ? this.st.pause.run(name).changes : this.st.resume.run(now, name).changes;
      if (changed === 0) return undefined;
      this.st.bump.run();
      return toSource(this.st.get.get(name)!);
    });
  }

  async remove(name: string): Promise<boolean> {
    return this.write(() => {
      if (this.st.remove.run(name).changes === 0) return false;
      this.st.bump.run();
      return true;
    });
  }

  async claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<SourceRecord[]> {
    return this.write(() =>
      this.st.due.all(now, now, Math.max(0, Math.trunc(limit))).map(({ name }) => {
        this.st.lease.run(owner, now + leaseMs, name);
        return toSource(this.st.get.get(name)!);
      }),
    );
  }

  /** One transaction; another process's lock is waited for (`patiently`): a lost record would lose its counters. */
  async recordPoll(name: string, owner: string, outcome: PollOutcome): Promise<void> {
    // Every number within the bounds of the record, whoever computed it (sources-rows.ts).
    const o = boundedPollOutcome(outcome);
    await patiently(async () => this.write(() => this.st.record.run({ ...o, name, owner })));
  }

  async registryVersion(): Promise<number> {
    return this.st.version.get() ?? 0;
  }

  async ingestItems(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]> {
    return ingestInSlices(items, async (slice) => this.ingestSlice(slice, at), this.slices);
  }

  /** One slice of `ingestItems`: one IMMEDIATE transaction. */
  private ingestSlice(items: SourcedItem[], at: number | (() => number)): ItemOutcome[] {
    return this.write(() =>
      runSteps(ingestSlice(items, at, { rows: this.rows, rule: this.rule, contents: this.contents })),
    );
  }

  async recordTextlessItems(source: string, externalIds: string[], now: number): Promise<number> {
    const keys = [...new Set(externalIds)].map((id) => TEXTLESS_KEY + id);
    if (keys.length === 0) return 0;
    const json = JSON.stringify(keys);
    return this.write(() => {
      const before = this.st.textlessSeen.get(json, source) ?? 0;
      this.st.upsertTextless.run(source, Math.trunc(now), json);
      return keys.length - before;
    });
  }

  async carriersOf(articleId: string): Promise<CarrierRecord[]> {
    return this.st.carriers.all(articleId).map(toCarrier);
  }

  async itemsOf(articleId: string): Promise<ItemRecord[]> {
    return this.st.items
      .all(articleId, REPEAT_KEY_DATED, REPEAT_KEY_DATED, REPEAT_KEY_UNDATED, REPEAT_KEY_UNDATED)
      .map(toItem);
  }

  async pruneSeen(olderThanMs: number, now: number): Promise<number> {
    return this.write(() => {
      const seen = this.st.pruneSeen.run(now - olderThanMs).changes;
      // Near keys matter within the near-duplicate window only.
      this.st.pruneKeys.run(now - Math.min(olderThanMs, this.rule.windowMs));
      return seen;
    });
  }
}
