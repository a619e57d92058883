/** The row shapes both SQL adapters read, and their mapping to the domain records. */
import type { Tier } from '../../contract/index.js';
import type { StoredArticle } from '../../domain/articles.js';
import type { AccountRecord } from '../../domain/tiers.js';
import type { KeyInfo, KeyRecord, NewArticle } from './index.js';

export interface ArticleRow {
  /** A number from SQLite, a string from PostgreSQL's bigint. */
  seq: number | string;
  id: string;
  content: string;
  urgency: string;
  sentiment: string | null;
  published_at: string | null;
  received_at: string;
  /** JSON text of the TickerSentiment array. */
  tickers: string;
  source: string | null;
  url: string | null;
}

export function toArticle(r: ArticleRow): StoredArticle {
  return {
    id: r.id,
    content: r.content,
    urgency: r.urgency as StoredArticle['urgency'],
    sentiment: r.sentiment as StoredArticle['sentiment'],
    published_at: r.published_at,
    received_at: r.received_at,
    source: r.source ?? null,
    url: r.url ?? null,
    tickers: JSON.parse(r.tickers),
  };
}

/** One insert's articles as stored, in order: `articles` conformed (domain/articles.ts), one receive time. */
export function toStored(
  articles: (NewArticle & Pick<StoredArticle, 'tickers'>)[],
  receivedAt: string,
  nextId: () => string,
): StoredArticle[] {
  return articles.map((a) => ({
    id: nextId(),
    content: a.content,
    urgency: a.urgency,
    sentiment: a.sentiment,
    published_at: a.published_at,
    received_at: receivedAt,
    source: a.source ?? null,
    url: a.url ?? null,
    tickers: a.tickers,
  }));
}

export interface AccountRow {
  id: string;
  tier: string;
  period_end: string | null;
  cancelled_at: string | null;
}

export const toAccount = (r: AccountRow): AccountRecord => ({
  id: r.id,
  tier: r.tier as Tier,
  periodEnd: r.period_end,
  cancelledAt: r.cancelled_at,
});

export interface KeyRow {
  id: string;
  account_id: string;
  /** 0 or 1 from SQLite, a boolean from PostgreSQL. */
  active: number | boolean;
}

export const toKey = (r: KeyRow): KeyRecord => ({
  keyId: r.id,
  accountId: r.account_id,
  active: r.active === true || r.active === 1,
});

export interface KeyInfoRow extends KeyRow {
  created_at: string;
}

export const toKeyInfo = (r: KeyInfoRow): KeyInfo => ({ ...toKey(r), createdAt: r.created_at });

/** A vector as both engines store it: its float32 bytes (SQLite blob, PostgreSQL bytea). */
export const vectorBytes = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

export interface VectorRow {
  /** A number from SQLite, a string from PostgreSQL's bigint. */
  rowid: number | string;
  article_id: string;
  vector: Uint8Array;
}

/** The bytes are copied: the Float32Array owns an aligned buffer of its own. */
export function toVector(r: VectorRow): { rowid: number; id: string; vector: Float32Array } {
  const copy = new Uint8Array(r.vector.byteLength);
  copy.set(r.vector);
  return { rowid: Number(r.rowid), id: r.article_id, vector: new Float32Array(copy.buffer) };
}
