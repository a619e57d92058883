/**
 * ArticleStore on PostgreSQL. Inserts take a transaction-scoped advisory lock before reading the clock and newest id
 * and assigning `seq` as max(seq) + n (a sequence is drawn at insert, not commit), so seq, id, received_at and commit
 * order agree across processes and a feed reader at seq N never skips a lower seq committed later.
 */
import { monotonicFactory } from 'ulid';
import { conformArticle, type StoredArticle } from '../../domain/articles.js';
import type { ArticleStore, FeedEntry, ListQuery, NewArticle } from '../ports/index.js';
import { receiveStamp } from '../ports/ids.js';
import { listPlan, listSql, numberedPlaceholders, shapeKey, tickerRows } from '../ports/list-query.js';
import { feedChannel, LOCK, type Db } from './db.js';
import { toArticle, toStored, type ArticleRow } from '../ports/rows.js';

const COLUMNS = 'seq, id, content, urgency, sentiment, published_at, received_at, tickers, source, url';

/** Article JSON byte-identical to SQLite's json_object() (json_build_object would space `"key" : value`). */
function articleJson(withTickers: boolean): string {
  const str = (col: string) => `to_json(${col})::text`;
  const nullable = (col: string) => `coalesce(to_json(${col})::text, 'null')`;
  const parts = [
    `'{"id":' || ${str('id')}`,
    `',"content":' || ${str('content')}`,
    `',"urgency":' || ${str('urgency')}`,
    `',"sentiment":' || ${nullable('sentiment')}`,
    `',"published_at":' || ${nullable('published_at')}`,
    `',"received_at":' || ${str('received_at')}`,
    `',"source":' || ${nullable('source')}`,
    `',"url":' || ${nullable('url')}`,
  ];
  if (withTickers) parts.push(`',"tickers":' || tickers`);
  return `${parts.join(' || ')} || '}'`;
}

export class PgArticles implements ArticleStore {
  private readonly ulid = monotonicFactory();
  /** List statements by name (one per shape), with their parameter order. */
  private readonly statements = new Map<string, { text: string; names: string[] }>();

  constructor(private readonly db: Db) {}

  async insert(articles: NewArticle[], at: number | (() => number)): Promise<StoredArticle[]> {
    if (articles.length === 0) return [];
    const conformed = articles.map((a) => conformArticle(a));
    return this.db.tx(async (db) => {
      // Held until commit: one article writer at a time per schema (waits up to lock_timeout, then "busy").
      await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK.articles, db.schema]);
      const newest =
        typeof at === 'number'
          ? undefined
          : (await db.query<{ id: string }>('SELECT id FROM articles ORDER BY id DESC LIMIT 1'))[0]?.id;
      const { receivedAt, nextId } = receiveStamp(at, newest, this.ulid);
      const out = toStored(conformed, receivedAt, nextId);
      const rows = await db.query<{ seq: string }>(
        `INSERT INTO articles (seq, id, content, urgency, sentiment, published_at, received_at, tickers, source, url)
         SELECT base.s + t.n, t.id, t.content, t.urgency, t.sentiment, t.published_at, $9, t.tickers, t.source, t.url
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
                WITH ORDINALITY AS t(id, content, urgency, sentiment, published_at, tickers, source, url, n),
              (SELECT coalesce(max(seq), 0) AS s FROM articles) AS base
         RETURNING seq`,
        [
          out.map((a) => a.id),
          out.map((a) => a.content),
          out.map((a) => a.urgency),
          out.map((a) => a.sentiment),
          out.map((a) => a.published_at),
          out.map((a) => JSON.stringify(a.tickers)),
          out.map((a) => a.source),
          out.map((a) => a.url),
          receivedAt,
        ],
      );
      await db.query(
        'INSERT INTO embed_queue (article_id, enqueued_at) SELECT unnest($1::text[]), $2 ON CONFLICT DO NOTHING',
        [out.map((a) => a.id), receivedAt],
      );
      const tickers = tickerRows(out);
      if (tickers.length > 0) {
        await db.query(
          'INSERT INTO article_tickers (ticker, article_id, urgency, relevance) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::real[]) ON CONFLICT DO NOTHING',
          [
            tickers.map((t) => t.ticker),
            tickers.map((t) => t.article_id),
            tickers.map((t) => t.urgency),
            tickers.map((t) => t.relevance),
          ],
        );
      }
      const newestSeq = rows.reduce((m, r) => Math.max(m, Number(r.seq)), 0);
      // Delivered at commit, in commit order, to every instance LISTENing on the schema's channel.
      await db.query('SELECT pg_notify($1, $2)', [feedChannel(db.schema), String(newestSeq)]);
      return out;
    });
  }

  /** One list page: a named prepared statement per shape (rows, or Article JSON with or without tickers). */
  private async listPage<R extends object>(kind: 'rows' | 'full' | 'public', q: ListQuery): Promise<R[]> {
    const { shape, values } = listPlan(q);
    const name = `fns_list_${kind}_${shapeKey(shape)}`;
    let st = this.statements.get(name);
    if (!st) {
      const { p, names } = numberedPlaceholders();
      const select = kind === 'rows' ? COLUMNS : `${articleJson(kind === 'full')} AS j`;
      st = { text: listSql(select, shape, p), names };
      this.statements.set(name, st);
    }
    return this.db.query<R>(
      st.text,
      st.names.map((n) => values[n]),
      name,
    );
  }

  async list(q: ListQuery): Promise<StoredArticle[]> {
    return (await this.listPage<ArticleRow>('rows', q)).map(toArticle);
  }

  async listJson(q: ListQuery, withTickers: boolean): Promise<string[]> {
    return (await this.listPage<{ j: string }>(withTickers ? 'full' : 'public', q)).map((r) => r.j);
  }

  async getMany(ids: string[]): Promise<StoredArticle[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<ArticleRow>(`SELECT ${COLUMNS} FROM articles WHERE id = ANY($1::text[])`, [ids]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const r = byId.get(id);
      return r ? [toArticle(r)] : [];
    });
  }

  async count(): Promise<number> {
    const rows = await this.db.query<{ n: string }>('SELECT count(*) AS n FROM articles');
    return Number(rows[0]!.n);
  }

  async feedAfter(seq: number, limit: number): Promise<FeedEntry[]> {
    const rows = await this.db.query<ArticleRow>(
      `SELECT ${COLUMNS} FROM articles WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [seq, limit],
      'fns_feed_after',
    );
    return rows.map((r) => ({ seq: Number(r.seq), article: toArticle(r) }));
  }

  async latestSeq(): Promise<number> {
    const rows = await this.db.query<{ s: string | null }>('SELECT max(seq) AS s FROM articles', [], 'fns_latest_seq');
    return Number(rows[0]?.s ?? 0);
  }
}
