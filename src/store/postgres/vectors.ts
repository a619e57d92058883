/** Vectors as bytea, the same float32 bytes as the SQLite blob (docs/decisions/vectors-as-bytea.md). */
import { affordableTerms, lexicalTerms, MAX_TERM_ARTICLES, tsQuery } from '../ports/lexical-query.js';
import type { VectorStore } from '../ports/index.js';
import { toVector, vectorBytes, type VectorRow } from '../ports/rows.js';
import { LOCK, type Db } from './db.js';

/** How long a batch handed to one worker stays invisible to the others (default of nextBatch). */
const DEFAULT_LEASE_MS = 120_000;

export class PgVectors implements VectorStore {
  constructor(private readonly db: Db) {}

  /** Under the vector writers' lock: an article another instance just embedded and dequeued is never queued again. */
  async enqueueMissing(model: string): Promise<number> {
    return this.db.tx(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK.vectors, db.schema]);
      const rows = await db.query(
        `INSERT INTO embed_queue (article_id, enqueued_at)
         SELECT a.id, $1 FROM articles a
         WHERE NOT EXISTS (SELECT 1 FROM article_vectors v WHERE v.article_id = a.id AND v.model = $2)
         ON CONFLICT DO NOTHING RETURNING article_id`,
        [new Date().toISOString(), model],
      );
      return rows.length;
    });
  }

  /** Leases the oldest unleased (or lease-expired) rows; SKIP LOCKED: concurrent workers never wait on each other. */
  async nextBatch(limit: number, leaseMs: number = DEFAULT_LEASE_MS): Promise<{ id: string; content: string }[]> {
    return this.db.query<{ id: string; content: string }>(
      `WITH picked AS (
         SELECT article_id FROM embed_queue
         WHERE leased_until IS NULL OR leased_until <= clock_timestamp()
         ORDER BY enqueued_at, article_id LIMIT $1
         FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE embed_queue q SET leased_until = clock_timestamp() + $2 * interval '1 millisecond'
         FROM picked WHERE q.article_id = picked.article_id
         RETURNING q.article_id, q.enqueued_at
       )
       SELECT a.id, a.content FROM leased JOIN articles a ON a.id = leased.article_id
       ORDER BY leased.enqueued_at, leased.article_id`,
      [limit, Math.max(0, Math.trunc(leaseMs))],
    );
  }

  /** A re-stored vector gets a new rowid; writers are serialised so rowids commit in order and readers skip none. */
  async storeVectors(model: string, stored: { id: string; vector: Float32Array }[]): Promise<void> {
    if (stored.length === 0) return;
    // One row per article (the last one wins, as consecutive INSERT OR REPLACEs would).
    const vectors = [...new Map(stored.map((v) => [v.id, v])).values()];
    await this.db.tx(async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK.vectors, db.schema]);
      const ids = vectors.map((v) => v.id);
      await db.query(
        `INSERT INTO article_vectors (article_id, model, vector)
         SELECT t.id, $2, t.v FROM unnest($1::text[], $3::bytea[]) WITH ORDINALITY AS t(id, v, n) ORDER BY t.n
         ON CONFLICT (article_id, model) DO UPDATE SET vector = EXCLUDED.vector, rowid = EXCLUDED.rowid`,
        [ids, model, vectors.map((v) => vectorBytes(v.vector))],
      );
      await db.query('DELETE FROM embed_queue WHERE article_id = ANY($1::text[])', [ids]);
    });
  }

  async queueLength(): Promise<number> {
    const rows = await this.db.query<{ n: string }>('SELECT count(*) AS n FROM embed_queue');
    return Number(rows[0]!.n);
  }

  /** Also ends the lease. */
  async deferEmbedding(ids: string[], now: number, maxAttempts: number): Promise<string[]> {
    if (ids.length === 0) return [];
    return this.db.tx(async (db) => {
      const rows = await db.query<{ article_id: string; attempts: number }>(
        `UPDATE embed_queue SET attempts = attempts + 1, enqueued_at = $1, leased_until = NULL
         WHERE article_id = ANY($2::text[]) RETURNING article_id, attempts`,
        [new Date(now).toISOString(), ids],
      );
      const dropped = new Set(rows.filter((r) => r.attempts >= maxAttempts).map((r) => r.article_id));
      if (dropped.size > 0)
        await db.query('DELETE FROM embed_queue WHERE article_id = ANY($1::text[])', [[...dropped]]);
      // In the caller's order, as the SQLite store.
      return ids.filter((id) => dropped.has(id));
    });
  }

  /** ts_rank_cd over the generated tsvector (GIN). */
  async lexicalSearch(query: string, limit: number): Promise<{ id: string; score: number }[]> {
    if (limit <= 0) return [];
    const all = lexicalTerms(query);
    if (all.length === 0) return [];
    // Each term's article count, bounded (LIMIT): common words are dropped (src/search/lexical.ts).
    const counts = await this.db.query<{ n: string[] }>(
      `SELECT array_agg((SELECT count(*) FROM (SELECT 1 FROM articles WHERE search_tsv @@ to_tsquery('english'::regconfig, t) LIMIT $2) s) ORDER BY o) AS n
       FROM unnest($1::text[]) WITH ORDINALITY AS u(t, o)`,
      [all.map((t) => tsQuery([t])), MAX_TERM_ARTICLES + 1],
    );
    const terms = affordableTerms(all, (counts[0]?.n ?? []).map(Number));
    if (terms.length === 0) return [];
    const rows = await this.db.query<{ id: string; score: number }>(
      `SELECT a.id, ts_rank_cd(a.search_tsv, q)::float8 AS score FROM articles a, to_tsquery('english'::regconfig, $1) q
       WHERE a.search_tsv @@ q ORDER BY score DESC, a.id DESC LIMIT $2`,
      [tsQuery(terms), limit],
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
  }

  async vectorsAfter(
    model: string,
    afterRowid: number,
    limit?: number,
  ): Promise<{ rowid: number; id: string; vector: Float32Array }[]> {
    // LIMIT NULL: no limit, for a call without one.
    const rows = await this.db.query<VectorRow>(
      'SELECT rowid, article_id, vector FROM article_vectors WHERE model = $1 AND rowid > $2 ORDER BY rowid LIMIT $3',
      [model, afterRowid, limit ?? null],
    );
    return rows.map(toVector);
  }
}
