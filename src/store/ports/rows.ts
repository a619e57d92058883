/** The row shapes both SQL adapters read, and their mapping to the domain records. */
import type { Tier } from '../../contract/index.js';
import type { StoredArticle } from '../../domain/articles.js';
import type { AccountRecord } from '../../domain/tiers.js';
import type { KeyInfo, KeyRecord } from './index.js';

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
