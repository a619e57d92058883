/** VectorStore on SQLite: no leases (one service process embeds), lexical search over FTS5. */
import type Database from 'better-sqlite3';
import type { VectorStore } from '../ports/index.js';
import { affordableTerms, fts5Query, lexicalTerms, MAX_TERM_ARTICLES } from '../ports/lexical-query.js';
import { toVector, vectorBytes, type VectorRow } from '../ports/rows.js';

/** Common query terms remembered by one store. */
const COMMON_TERMS_KEPT = 10_000;

export class SqliteVectors implements VectorStore {
  private readonly st;
  /** Query terms found in more than MAX_TERM_ARTICLES articles (at most COMMON_TERMS_KEPT of them). */
  private readonly commonTerms = new Set<string>();

  constructor(private readonly db: Database.Database) {
    this.st = {
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
      deferEmbedding: db.prepare(
        'UPDATE embed_queue SET attempts = attempts + 1, enqueued_at = ? WHERE article_id = ? RETURNING attempts',
      ),
      queueLength: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM embed_queue'),
      // bm25() is lower for a better match: negated, so a higher score is better (as cosine).
      lexical: db.prepare<[string, number], { id: string; score: number }>(
        `SELECT a.id AS id, -bm25(article_fts) AS score FROM article_fts JOIN articles a ON a.seq = article_fts.rowid
         WHERE article_fts MATCH ? ORDER BY bm25(article_fts), a.id DESC LIMIT ?`,
      ),
      termArticles: db.prepare<[string, number], { n: number }>(
        'SELECT count(*) AS n FROM (SELECT 1 FROM article_fts WHERE article_fts MATCH ? LIMIT ?)',
      ),
      // LIMIT -1: no limit (SQLite), for a call without one.
      vectorsAfter: db.prepare<[string, number, number], VectorRow>(
        'SELECT rowid, article_id, vector FROM article_vectors WHERE model = ? AND rowid > ? ORDER BY rowid LIMIT ?',
      ),
    };
  }

  async enqueueMissing(model: string): Promise<number> {
    return this.st.enqueueMissing.run(new Date().toISOString(), model).changes;
  }

  async nextBatch(limit: number): Promise<{ id: string; content: string }[]> {
    return this.st.nextBatch.all(limit);
  }

  /** SQLite's plan for the next batch (EXPLAIN QUERY PLAN), for the tests: the queue's index, no sort. */
  explainNextBatch(): string[] {
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${this.st.nextBatch.source}`).all(1) as { detail: string }[]).map(
      (r) => r.detail,
    );
  }

  /** One transaction; on another process's lock it fails (SQLITE_BUSY): the embedding worker keeps and retries them. */
  async storeVectors(model: string, vectors: { id: string; vector: Float32Array }[]): Promise<void> {
    this.db.transaction(() => {
      for (const { id, vector } of vectors) {
        this.st.storeVector.run(id, model, vectorBytes(vector));
        this.st.dequeue.run(id);
      }
    })();
  }

  async deferEmbedding(ids: string[], now: number, maxAttempts: number): Promise<string[]> {
    const dropped: string[] = [];
    this.db.transaction(() => {
      for (const id of ids) {
        const row = this.st.deferEmbedding.get(new Date(now).toISOString(), id) as { attempts: number } | undefined;
        if (row && row.attempts >= maxAttempts) {
          this.st.dequeue.run(id);
          dropped.push(id);
        }
      }
    })();
    return dropped;
  }

  async queueLength(): Promise<number> {
    return this.st.queueLength.get()!.n;
  }

  async lexicalSearch(query: string, limit: number): Promise<{ id: string; score: number }[]> {
    if (limit <= 0) return [];
    // Counts stop at the cap. Articles are only added, so a term past the cap stays past it: remembered.
    const all = lexicalTerms(query);
    const counts = all.map((t) => {
      if (this.commonTerms.has(t)) return MAX_TERM_ARTICLES + 1;
      const n = this.st.termArticles.get(fts5Query([t]), MAX_TERM_ARTICLES + 1)!.n;
      if (n > MAX_TERM_ARTICLES && this.commonTerms.size < COMMON_TERMS_KEPT) this.commonTerms.add(t);
      return n;
    });
    const terms = affordableTerms(all, counts);
    if (terms.length === 0) return [];
    return this.st.lexical.all(fts5Query(terms), limit);
  }

  async vectorsAfter(
    model: string,
    afterRowid: number,
    limit?: number,
  ): Promise<{ rowid: number; id: string; vector: Float32Array }[]> {
    return this.st.vectorsAfter.all(model, afterRowid, limit ?? -1).map(toVector);
  }
}
