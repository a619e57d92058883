/** The SQLite schema, in order: `PRAGMA user_version` counts the migrations applied. */
import type Database from 'better-sqlite3';
import { IDENTITY_MIGRATION, SOURCES_MIGRATION } from './sources.js';
import { STATUS_TABLES } from './status.js';
import { WEBHOOKS_MIGRATION } from './webhooks.js';

/** One step of the schema: SQL, or a function where a step must look first (SQLite has no ADD COLUMN IF NOT EXISTS). */
export type Migration = string | ((db: Database.Database) => void);

/** Adds a column unless the table has it: a step that adds columns stays safe to apply again. */
function addColumn(db: Database.Database, table: string, column: string, definition: string): void {
  const has = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).some(
    (c) => c.name === column,
  );
  if (!has) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
}

/** Exported for the migration tests (rewinding to an earlier version); user_version counts the applied ones. */
export const MIGRATIONS: readonly Migration[] = [
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
  // The ticker index of the list filter (urgency copied for its filter), backfilled from the tickers JSON.
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
  // Webhook endpoints: registry, delivery cursor, failure run, leases.
  WEBHOOKS_MIGRATION,
  // The lexical index: external-content FTS5 (the text is stored once), filled by triggers in every insert's own
  // transaction, whatever the path. Idempotent ('rebuild' recomputes).
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
  // nextBatch reads the queue in this order: without the index each batch sorts the whole queue. Idempotent.
  `CREATE INDEX IF NOT EXISTS embed_queue_order ON embed_queue(enqueued_at, article_id);`,
  // Relevance per ticker (older articles: 1 each). Idempotent: json_insert keeps a stored relevance.
  (db) => {
    addColumn(db, 'article_tickers', 'relevance', 'REAL NOT NULL DEFAULT 1');
    addColumn(db, 'webhook_endpoints', 'min_relevance', 'REAL');
    db.exec(`UPDATE articles SET tickers = (SELECT json_group_array(json_insert(j.value, '$.relevance', 1)) FROM json_each(articles.tickers) j)
               WHERE tickers <> '[]'`);
  },
  // The public status page: source health columns (backfilled from the last poll) and the status tables. Idempotent.
  (db) => {
    for (const column of ['last_ok_at', 'failing_since', 'last_article_at'])
      addColumn(db, 'sources', column, 'INTEGER');
    db.exec(`UPDATE sources SET last_ok_at = last_poll_at WHERE last_ok_at IS NULL AND last_error IS NULL AND last_poll_at IS NOT NULL;
             UPDATE sources SET failing_since = last_poll_at WHERE failing_since IS NULL AND last_error IS NOT NULL;`);
    db.exec(STATUS_TABLES);
  },
];

export function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      const step = MIGRATIONS[v]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
