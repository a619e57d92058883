/** `seq` is assigned in commit order, so with a second writing process every feed reader still sees one order. */
import type Database from 'better-sqlite3';
import { monotonicFactory } from 'ulid';
import { conformArticle, type StoredArticle } from '../../domain/articles.js';
import type { ArticleStore, FeedEntry, ListQuery, NewArticle } from '../ports/index.js';
import { receiveStamp } from '../ports/ids.js';
import { listPlan, listSql, shapeKey, tickerRows } from '../ports/list-query.js';
import { toArticle, toStored, type ArticleRow } from '../ports/rows.js';

/** Article JSON built by SQLite itself, in the contract's field order (see ArticleStore.listJson). */
function articleJson(withTickers: boolean): string {
  const fields = [
    "'id', id",
    "'content', content",
    "'urgency', urgency",
    "'sentiment', sentiment",
    "'published_at', published_at",
    "'received_at', received_at",
    "'source', source",
    "'url', url",
  ];
  if (withTickers) fields.push("'tickers', json(tickers)");
  return `json_object(${fields.join(', ')})`;
}

export class SqliteArticles implements ArticleStore {
  private readonly ulid = monotonicFactory();
  private readonly st;
  private readonly listStatements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.st = {
      insertArticle: db.prepare(
        `INSERT INTO articles (id, content, urgency, sentiment, published_at, received_at, tickers, source, url)
         VALUES (@id, @content, @urgency, @sentiment, @published_at, @received_at, @tickers, @source, @url)`,
      ),
      enqueue: db.prepare('INSERT OR IGNORE INTO embed_queue (article_id, enqueued_at) VALUES (?, ?)'),
      insertTicker: db.prepare(
        'INSERT OR IGNORE INTO article_tickers (ticker, article_id, urgency, relevance) VALUES (@ticker, @article_id, @urgency, @relevance)',
      ),
      newestId: db.prepare<[], string>('SELECT id FROM articles ORDER BY id DESC LIMIT 1').pluck(),
      byId: db.prepare<[string], ArticleRow>('SELECT * FROM articles WHERE id = ?'),
      count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM articles'),
      feed: db.prepare<[number, number], ArticleRow>('SELECT * FROM articles WHERE seq > ? ORDER BY seq LIMIT ?'),
      latestSeq: db.prepare<[], { s: number | null }>('SELECT max(seq) AS s FROM articles'),
    };
  }

  async insert(articles: NewArticle[], at: number | (() => number)): Promise<StoredArticle[]> {
    return this.insertNow(articles, at);
  }

  /** `insert`, synchronously: inside another write transaction (the source ingest), it joins it. */
  insertNow(articles: NewArticle[], at: number | (() => number)): StoredArticle[] {
    const write = () => {
      // Under the write lock: no other process commits in between.
      const newest = typeof at === 'number' ? undefined : this.st.newestId.get();
      const { receivedAt, nextId } = receiveStamp(at, newest, this.ulid);
      const out = toStored(
        articles.map((a) => conformArticle(a)),
        receivedAt,
        nextId,
      );
      for (const a of out) {
        this.st.insertArticle.run({ ...a, tickers: JSON.stringify(a.tickers) });
        this.st.enqueue.run(a.id, receivedAt);
        for (const t of tickerRows([a])) this.st.insertTicker.run(t);
      }
      return out;
    };
    // IMMEDIATE: take the write lock before reading the clock and the newest id.
    return this.db.transaction(write).immediate();
  }

  /** One list page: a statement per shape (rows, or Article JSON with or without tickers), prepared on first use. */
  private listPage(kind: 'rows' | 'full' | 'public', q: ListQuery): unknown[] {
    const { shape, values } = listPlan(q);
    const key = `${kind}:${shapeKey(shape)}`;
    let st = this.listStatements.get(key);
    if (!st) {
      const select = kind === 'rows' ? '*' : articleJson(kind === 'full');
      st = this.db.prepare(listSql(select, shape, (name) => `@${name}`));
      if (kind !== 'rows') st.pluck();
      this.listStatements.set(key, st);
    }
    return st.all(values);
  }

  /** The SQL of a list page and SQLite's plan for it (EXPLAIN QUERY PLAN), for tests and the docs. */
  explainList(q: ListQuery): { sql: string; plan: string[] } {
    const { shape, values } = listPlan(q);
    const sql = listSql('*', shape, (name) => `@${name}`);
    const plan = this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(values) as { detail: string }[];
    return { sql, plan: plan.map((r) => r.detail) };
  }

  async list(q: ListQuery): Promise<StoredArticle[]> {
    return (this.listPage('rows', q) as ArticleRow[]).map(toArticle);
  }

  async listJson(q: ListQuery, withTickers: boolean): Promise<string[]> {
    return this.listPage(withTickers ? 'full' : 'public', q) as string[];
  }

  async getMany(ids: string[]): Promise<StoredArticle[]> {
    return ids.flatMap((id) => {
      const r = this.st.byId.get(id);
      return r ? [toArticle(r)] : [];
    });
  }

  async count(): Promise<number> {
    return this.st.count.get()!.n;
  }

  async feedAfter(seq: number, limit: number): Promise<FeedEntry[]> {
    return this.st.feed.all(seq, limit).map((r) => ({ seq: Number(r.seq), article: toArticle(r) }));
  }

  async latestSeq(): Promise<number> {
    return this.st.latestSeq.get()!.s ?? 0;
  }
}
