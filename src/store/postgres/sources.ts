/** `ingestItems` takes the article writers' advisory lock first: two processes' check-then-insert never interleave. */
import type {
  CarrierRecord,
  ItemOutcome,
  ItemRecord,
  NearDuplicateRule,
  PollOutcome,
  SourcedItem,
  SourceRecord,
  SourceStore,
  UrgencySetting,
} from '../ports/index.js';
import { SourceExistsError } from '../ports/errors.js';
import { REPEAT_KEY_DATED, REPEAT_KEY_UNDATED } from '../../dedup/repeat.js';
import { TEXTLESS_KEY } from '../ports/sources-plan.js';
import { contentCache, ingestInSlices, ingestSlice, type SliceOptions, type SliceRows } from '../ports/ingest-slice.js';
import { runStepsAsync } from '../../runtime/steps.js';
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
import { PgArticles } from './articles.js';
import { LOCK, type Db } from './db.js';

/** Migration 2: the registry and dedup tables (times as epoch ms, bigint). */
export const SOURCES_MIGRATION = `
  CREATE TABLE sources (
    n bigserial UNIQUE,
    name text COLLATE "C" PRIMARY KEY,
    url text NOT NULL,
    every_ms bigint NOT NULL,
    urgency text NOT NULL,
    paused boolean NOT NULL DEFAULT false,
    created_at bigint NOT NULL,
    etag text,
    last_modified text,
    last_poll_at bigint,
    last_status integer,
    last_error text,
    next_poll_at bigint,
    failures integer NOT NULL DEFAULT 0,
    min_interval_ms bigint,
    items_seen bigint NOT NULL DEFAULT 0,
    items_ingested bigint NOT NULL DEFAULT 0,
    items_deduplicated bigint NOT NULL DEFAULT 0,
    lease_owner text,
    lease_until bigint
  );
  CREATE TABLE source_registry (id integer PRIMARY KEY CHECK (id = 1), version bigint NOT NULL);
  INSERT INTO source_registry (id, version) VALUES (1, 0);
  CREATE TABLE seen_items (
    source text COLLATE "C" NOT NULL,
    external_id text COLLATE "C" NOT NULL,
    canonical_url text COLLATE "C",
    article_id text COLLATE "C" NOT NULL,
    seen_at bigint NOT NULL,
    PRIMARY KEY (source, external_id)
  );
  CREATE INDEX seen_items_url ON seen_items(canonical_url) WHERE canonical_url IS NOT NULL;
  CREATE INDEX seen_items_time ON seen_items(seen_at);
  CREATE TABLE near_keys (
    key text COLLATE "C" NOT NULL,
    article_id text COLLATE "C" NOT NULL,
    source text COLLATE "C" NOT NULL,
    at bigint NOT NULL
  );
  -- One index (about 20 rows per article): pruning scans the table, which is rare and bounded by the 24 h window.
  CREATE INDEX near_keys_key ON near_keys(key, at);
  CREATE TABLE article_carriers (
    n bigserial PRIMARY KEY,
    article_id text COLLATE "C" NOT NULL,
    source text COLLATE "C" NOT NULL,
    url text,
    at bigint NOT NULL,
    UNIQUE (article_id, source)
  );`;

/** Migration 4: article identity (see the SQLite store's IDENTITY_MIGRATION, src/store/sqlite/sources.ts). */
export const IDENTITY_MIGRATION = `
  ALTER TABLE seen_items ADD COLUMN reason text;
  ALTER TABLE article_carriers ADD COLUMN reason text;
  UPDATE article_carriers c SET reason = 'near-duplicate'
    WHERE c.n > (SELECT min(f.n) FROM article_carriers f WHERE f.article_id = c.article_id);
  UPDATE articles a SET source = (SELECT c.source FROM article_carriers c WHERE c.article_id = a.id ORDER BY c.n LIMIT 1)
    WHERE a.source IS NULL;
  UPDATE articles a SET url = coalesce(
      (SELECT s.canonical_url FROM seen_items s WHERE s.article_id = a.id AND s.source = a.source AND s.canonical_url IS NOT NULL ORDER BY s.seen_at LIMIT 1),
      a.url,
      (SELECT c.url FROM article_carriers c WHERE c.article_id = a.id AND c.source = a.source))
    WHERE a.source IS NOT NULL AND EXISTS (SELECT 1 FROM article_carriers c WHERE c.article_id = a.id);
  UPDATE articles SET source = NULL WHERE source IS NOT NULL AND source !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
  UPDATE articles SET url = NULL WHERE url IS NOT NULL AND (length(url) > 2000 OR url !~ '^https?://\\S+$');`;

export class PgSources implements SourceStore {
  private readonly contents = contentCache();

  constructor(
    private readonly db: Db,
    private readonly rule: NearDuplicateRule,
    private readonly slices: SliceOptions = {},
  ) {}

  async add(
    s: { name: string; url: string; everyMs: number; urgency: UrgencySetting },
    now: number,
  ): Promise<SourceRecord> {
    return this.db.tx(async (db) => {
      const rows = await db.query<SourceRow>(
        `INSERT INTO sources (name, url, every_ms, urgency, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO NOTHING RETURNING ${SOURCE_COLUMNS}`,
        [s.name, s.url, Math.trunc(s.everyMs), s.urgency, now],
      );
      if (rows.length === 0) throw new SourceExistsError(s.name);
      await bump(db);
      return toSource(rows[0]!);
    });
  }

  async list(): Promise<SourceRecord[]> {
    return (await this.db.query<SourceRow>(`SELECT ${SOURCE_COLUMNS} FROM sources ORDER BY n`)).map(toSource);
  }

  async get(name: string): Promise<SourceRecord | undefined> {
    const rows = await this.db.query<SourceRow>(`SELECT ${SOURCE_COLUMNS} FROM sources WHERE name = $1`, [name]);
    return rows[0] && toSource(rows[0]);
  }

  async setPaused(name: string, paused: boolean, now: number): Promise<SourceRecord | undefined> {
    return this.db.tx(async (db) => {
      const rows = paused
        ? await db.query<SourceRow>(`UPDATE sources SET paused = true WHERE name = $1 RETURNING ${SOURCE_COLUMNS}`, [
            name,
          ])
        : // Resumed: polled at once (its next poll time is now).
          await db.query<SourceRow>(
            `UPDATE sources SET paused = false, next_poll_at = $2 WHERE name = $1 RETURNING ${SOURCE_COLUMNS}`,
            [name, now],
          );
      if (rows.length === 0) return undefined;
      await bump(db);
      return toSource(rows[0]!);
    });
  }

  async remove(name: string): Promise<boolean> {
    return this.db.tx(async (db) => {
      const rows = await db.query('DELETE FROM sources WHERE name = $1 RETURNING name', [name]);
      if (rows.length === 0) return false;
      await bump(db);
      return true;
    });
  }

  /** SKIP LOCKED: concurrent claimers never wait on each other; FOR UPDATE re-checks the lease on the row it locks. */
  async claimDue(owner: string, now: number, leaseMs: number, limit: number): Promise<SourceRecord[]> {
    const rows = await this.db.query<SourceRow & { n: string }>(
      `WITH due AS (
         SELECT name FROM sources
         WHERE NOT paused AND (next_poll_at IS NULL OR next_poll_at <= $1) AND (lease_until IS NULL OR lease_until <= $1)
         ORDER BY coalesce(next_poll_at, 0), n LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       UPDATE sources s SET lease_owner = $2, lease_until = $1::bigint + $4::bigint FROM due WHERE s.name = due.name
       RETURNING s.n, ${SOURCE_COLUMNS.split(', ')
         .map((c) => `s.${c}`)
         .join(', ')}`,
      [now, owner, Math.max(0, Math.trunc(limit)), Math.trunc(leaseMs)],
    );
    rows.sort((a, b) => Number(a.next_poll_at ?? 0) - Number(b.next_poll_at ?? 0) || Number(a.n) - Number(b.n));
    return rows.map(toSource);
  }

  async recordPoll(name: string, owner: string, outcome: PollOutcome): Promise<void> {
    // Every number within the columns' bounds, whoever computed it (sources-rows.ts).
    const o = boundedPollOutcome(outcome);
    await this.db.query(
      // A poll without an error is an ok one; one with an error starts a run of failures or continues it.
      `UPDATE sources SET
         last_poll_at = $3, last_status = $4, last_error = $5, etag = $6, last_modified = $7,
         last_ok_at = CASE WHEN $5::text IS NULL THEN $3::bigint ELSE last_ok_at END,
         failing_since = CASE WHEN $5::text IS NULL THEN NULL ELSE coalesce(failing_since, $3::bigint) END,
         last_article_at = CASE WHEN $12::bigint > 0 THEN $3::bigint ELSE last_article_at END,
         next_poll_at = $8, failures = $9, min_interval_ms = $10,
         items_seen = items_seen + $11, items_ingested = items_ingested + $12, items_deduplicated = items_deduplicated + $13,
         lease_owner = CASE WHEN lease_owner = $2 THEN NULL ELSE lease_owner END,
         lease_until = CASE WHEN lease_owner = $2 THEN NULL ELSE lease_until END
       WHERE name = $1`,
      [
        name,
        owner,
        o.at,
        o.status,
        o.error,
        o.etag,
        o.lastModified,
        o.nextPollAt,
        o.failures,
        o.minIntervalMs,
        o.seen,
        o.ingested,
        o.deduplicated,
      ],
    );
  }

  async registryVersion(): Promise<number> {
    const rows = await this.db.query<{ version: string }>(
      'SELECT version FROM source_registry WHERE id = 1',
      [],
      'fns_registry_version',
    );
    return Number(rows[0]?.version ?? 0);
  }

  async ingestItems(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]> {
    return ingestInSlices(items, (slice) => this.ingestSlice(slice, at), this.slices);
  }

  private async ingestSlice(items: SourcedItem[], at: number | (() => number)): Promise<ItemOutcome[]> {
    return this.db.tx(async (db) => {
      // The lock every article insert takes (articles.ts): no other process checks or inserts until commit.
      await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK.articles, db.schema]);
      return runStepsAsync(ingestSlice(items, at, { rows: sliceRows(db), rule: this.rule, contents: this.contents }));
    });
  }

  async recordTextlessItems(source: string, externalIds: string[], now: number): Promise<number> {
    const keys = [...new Set(externalIds)].map((id) => TEXTLESS_KEY + id);
    if (keys.length === 0) return 0;
    // xmax = 0 marks a row this statement inserted (not updated).
    const rows = await this.db.query<{ inserted: boolean }>(
      `INSERT INTO seen_items (source, external_id, canonical_url, article_id, seen_at)
       SELECT $1, e, NULL, '', $3 FROM unnest($2::text[]) AS t(e)
       ON CONFLICT (source, external_id) DO UPDATE SET seen_at = EXCLUDED.seen_at
       RETURNING (xmax = 0) AS inserted`,
      [source, keys, Math.trunc(now)],
    );
    return rows.filter((r) => r.inserted).length;
  }

  async carriersOf(articleId: string): Promise<CarrierRecord[]> {
    const rows = await this.db.query<CarrierRow>(
      'SELECT source, url, at, reason FROM article_carriers WHERE article_id = $1 ORDER BY n',
      [articleId],
    );
    return rows.map(toCarrier);
  }

  async itemsOf(articleId: string): Promise<ItemRecord[]> {
    const rows = await this.db.query<ItemRow>(
      `SELECT source, external_id, canonical_url, seen_at, reason FROM seen_items
       WHERE article_id = $1 AND NOT starts_with(external_id, $2) AND NOT starts_with(external_id, $3)
       ORDER BY seen_at, source, external_id`,
      [articleId, REPEAT_KEY_DATED, REPEAT_KEY_UNDATED],
    );
    return rows.map(toItem);
  }

  async pruneSeen(olderThanMs: number, now: number): Promise<number> {
    return this.db.tx(async (db) => {
      const seen = await db.query('DELETE FROM seen_items WHERE seen_at < $1 RETURNING 1', [now - olderThanMs]);
      // Near keys matter within the near-duplicate window only.
      await db.query('DELETE FROM near_keys WHERE at < $1', [now - Math.min(olderThanMs, this.rule.windowMs)]);
      return seen.length;
    });
  }
}

async function bump(db: Db): Promise<void> {
  await db.query('UPDATE source_registry SET version = version + 1 WHERE id = 1');
}

/** The rows of a slice on PostgreSQL, in the slice's transaction `db` (ingest-slice.ts). */
function sliceRows(db: Db): SliceRows {
  return {
    seenByItem: (keys) =>
      db.query<{ source: string; external_id: string; article_id: string; seen_at: string }>(
        `SELECT s.source, s.external_id, s.article_id, s.seen_at FROM seen_items s
         JOIN unnest($1::text[], $2::text[]) AS t(source, external_id) ON s.source = t.source AND s.external_id = t.external_id`,
        [keys.map((k) => k[0]), keys.map((k) => k[1])],
      ),
    async seenByUrl(urls) {
      const rows = await db.query<{ canonical_url: string; article_id: string }>(
        `SELECT DISTINCT ON (canonical_url) canonical_url, article_id FROM seen_items
         WHERE canonical_url = ANY($1::text[]) ORDER BY canonical_url, seen_at`,
        [urls],
      );
      return rows.map((r) => ({ url: r.canonical_url, articleId: r.article_id }));
    },
    async nearHits(keys, from, perKey) {
      // Per key, its newest `perKey` articles of the window (one index scan each).
      const rows = await db.query<{ key: string; article_id: string; source: string; at: string }>(
        `SELECT k.key, nk.article_id, nk.source, nk.at FROM unnest($1::text[]) AS k(key) CROSS JOIN LATERAL (
           SELECT article_id, source, at FROM near_keys WHERE key = k.key AND at >= $2 ORDER BY at DESC LIMIT $3
         ) nk`,
        [keys, from, perKey],
      );
      return rows.map((r) => [r.key, r.article_id, r.source, Number(r.at)]);
    },
    async carried(pairs) {
      const rows = await db.query<{ a: string; s: string }>(
        `SELECT t.a, t.s FROM unnest($1::text[], $2::text[]) AS t(a, s)
         WHERE EXISTS (SELECT 1 FROM article_carriers c WHERE c.article_id = t.a AND c.source = t.s)`,
        [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
      );
      return rows.map((r) => [r.a, r.s]);
    },
    contents: (ids) =>
      db.query<{ id: string; content: string }>('SELECT id, content FROM articles WHERE id = ANY($1::text[])', [ids]),
    insertArticles: (articles, at) => new PgArticles(db).insert(articles, at),
    async upsertSeen(rows, now) {
      await db.query(
        `INSERT INTO seen_items (source, external_id, canonical_url, article_id, seen_at, reason)
         SELECT s, e, u, a, $5, r FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $6::text[]) AS t(s, e, u, a, r)
         ON CONFLICT (source, external_id) DO UPDATE SET seen_at = EXCLUDED.seen_at, article_id = EXCLUDED.article_id`,
        [
          rows.map((r) => r[0]),
          rows.map((r) => r[1]),
          rows.map((r) => r[2]),
          rows.map((r) => r[3]),
          now,
          rows.map((r) => r[4]),
        ],
      );
    },
    async insertKeys(rows) {
      await db.query(
        'INSERT INTO near_keys (key, article_id, source, at) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])',
        [rows.map((k) => k[0]), rows.map((k) => k[1]), rows.map((k) => k[2]), rows.map((k) => k[3])],
      );
    },
    async insertCarriers(rows, now) {
      await db.query(
        `INSERT INTO article_carriers (article_id, source, url, at, reason)
         SELECT a, s, u, $4, r FROM unnest($1::text[], $2::text[], $3::text[], $5::text[]) WITH ORDINALITY AS t(a, s, u, r, n) ORDER BY t.n
         ON CONFLICT DO NOTHING`,
        [rows.map((c) => c[0]), rows.map((c) => c[1]), rows.map((c) => c[2]), now, rows.map((c) => c[3])],
      );
    },
  };
}
