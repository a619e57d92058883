/**
 * Versioned migrations (`schema_migrations`), applied at start and by `fns migrate` under an advisory lock, so
 * instances starting together apply each once. Text columns mirror SQLite (same ISO and JSON text), so both engines
 * return byte-identical Article JSON; ids use the "C" collation, so ULIDs sort by byte whatever the locale.
 */
import pg from 'pg';
import { checkSchema, connectionString, DEFAULTS, LOCK } from './db.js';
import { IDENTITY_MIGRATION, SOURCES_MIGRATION } from './sources.js';
import { STATUS_MIGRATION } from './status.js';
import { WEBHOOKS_MIGRATION } from './webhooks.js';

export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id text COLLATE "C" PRIMARY KEY,
     tier text NOT NULL,
     period_end text,
     cancelled_at text,
     created_at text NOT NULL
   );
   CREATE TABLE api_keys (
     n bigserial UNIQUE,
     id text COLLATE "C" PRIMARY KEY,
     account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
     key_hash text NOT NULL UNIQUE,
     active boolean NOT NULL DEFAULT true,
     created_at text NOT NULL
   );
   CREATE INDEX api_keys_account ON api_keys(account_id, n);
   -- seq is assigned by the insert itself, under an advisory lock: seq order is commit order.
   CREATE TABLE articles (
     seq bigint PRIMARY KEY,
     id text COLLATE "C" NOT NULL UNIQUE,
     content text NOT NULL,
     urgency text NOT NULL,
     sentiment text,
     published_at text,
     received_at text NOT NULL,
     tickers text NOT NULL,
     source text,
     url text
   );
   CREATE INDEX articles_urgency_id ON articles(urgency, id);
   CREATE TABLE embed_queue (
     article_id text COLLATE "C" PRIMARY KEY REFERENCES articles(id),
     enqueued_at text NOT NULL,
     attempts integer NOT NULL DEFAULT 0,
     leased_until timestamptz
   );
   CREATE INDEX embed_queue_order ON embed_queue(enqueued_at, article_id);
   CREATE TABLE article_vectors (
     rowid bigserial PRIMARY KEY,
     article_id text COLLATE "C" NOT NULL REFERENCES articles(id),
     model text NOT NULL,
     vector bytea NOT NULL,
     UNIQUE (article_id, model)
   );
   CREATE INDEX article_vectors_model ON article_vectors(model, rowid);`,
  // 2: the source registry, exact-dedup records, near-dup keys, carriers.
  SOURCES_MIGRATION,
  // 3: the ticker index of the list filter (urgency copied for its filter), backfilled from the tickers JSON.
  `CREATE TABLE article_tickers (
     ticker text COLLATE "C" NOT NULL,
     article_id text COLLATE "C" NOT NULL REFERENCES articles(id),
     urgency text NOT NULL,
     PRIMARY KEY (ticker, article_id)
   );
   CREATE INDEX article_tickers_urgency ON article_tickers(ticker, urgency, article_id);
   INSERT INTO article_tickers (ticker, article_id, urgency)
     SELECT DISTINCT e->>'ticker', a.id, a.urgency FROM articles a, jsonb_array_elements(a.tickers::jsonb) e
     WHERE e->>'ticker' IS NOT NULL
   ON CONFLICT DO NOTHING;`,
  // 4: article identity: dedup reasons, source and url backfilled from the carriers.
  IDENTITY_MIGRATION,
  // 5: webhook endpoints: registry, delivery cursor, failure run, leases.
  WEBHOOKS_MIGRATION,
  // 6: the lexical index, a generated tsvector (so every insert path fills it) with a GIN index. Idempotent.
  `ALTER TABLE articles ADD COLUMN IF NOT EXISTS search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED;
   CREATE INDEX IF NOT EXISTS articles_search_tsv ON articles USING GIN (search_tsv);`,
  // 7: relevance per ticker (older articles: 1 each). Idempotent: a stored relevance is kept.
  `ALTER TABLE article_tickers ADD COLUMN IF NOT EXISTS relevance real NOT NULL DEFAULT 1;
   ALTER TABLE webhook_endpoints ADD COLUMN IF NOT EXISTS min_relevance real;
   UPDATE articles SET tickers = (
     SELECT jsonb_agg('{"relevance": 1}'::jsonb || e ORDER BY n)::text FROM jsonb_array_elements(articles.tickers::jsonb) WITH ORDINALITY AS x(e, n))
   WHERE tickers <> '[]' AND tickers NOT LIKE '%"relevance"%';`,
  // 8: the public status page: source health columns and the status tables (status.ts). Idempotent.
  STATUS_MIGRATION,
];

export const LATEST_VERSION = MIGRATIONS.length;

/** Highest applied version (0: none), on a connection whose search_path is the schema. */
async function appliedVersion(client: pg.Client): Promise<number> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!exists.rows[0]?.t) return 0;
  const r = await client.query<{ v: number }>('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
  return r.rows[0]?.v ?? 0;
}

/** Creates the schema if needed and applies each missing migration in its own transaction; returns those applied. */
export async function migrate(
  url: string,
  schema: string = DEFAULTS.schema,
  options: { connectTimeoutMs?: number } = {},
): Promise<number[]> {
  checkSchema(schema);
  const client = new pg.Client({
    connectionString: connectionString(url),
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
    application_name: 'fns migrate',
  });
  client.on('error', () => {});
  await client.connect();
  const applied: number[] = [];
  try {
    // No statement timeout: an index build on a large archive may take a while (others wait on the lock).
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK.migrations, schema]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`SET search_path = ${schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const current = await appliedVersion(client);
      for (let v = current; v < MIGRATIONS.length; v++) {
        await client.query('BEGIN');
        try {
          await client.query(MIGRATIONS[v]!);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [v + 1]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          throw e;
        }
        applied.push(v + 1);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK.migrations, schema]);
    }
  } finally {
    await client.end();
  }
  return applied;
}
