/** How an article is shown to a key: `tickers` only when the plan includes per-ticker sentiment. */
import { articleRules, tickerSentiments, type Article, type TickerSentiment } from '../contract/index.js';

/** An article as stored: always with its tickers. */
export type StoredArticle = Omit<Article, 'tickers'> & { tickers: TickerSentiment[] };

export function presentArticle(article: StoredArticle, withTickers: boolean): Article {
  if (withTickers) return article;
  const { tickers: _omit, ...rest } = article;
  return rest;
}

/**
 * What the archive stores obeys the contract's Article schema, whatever the input or the derivation
 * produced: tickers are valid symbols, unique, at most `tickersMaxItems` (the first ones kept); content
 * longer than the contract allows is refused (never cut silently).
 */
export function conformArticle<T extends { content: string; tickers: TickerSentiment[] }>(article: T): T {
  if (article.content.length > articleRules.contentMaxLength) {
    throw new RangeError(`content is longer than ${articleRules.contentMaxLength} characters`);
  }
  const seen = new Set<string>();
  const tickers: TickerSentiment[] = [];
  for (const t of article.tickers) {
    if (tickers.length === articleRules.tickersMaxItems) break;
    if (!articleRules.tickerPattern.test(t.ticker) || seen.has(t.ticker) || !tickerSentiments.includes(t.sentiment)) continue;
    seen.add(t.ticker);
    tickers.push(t);
  }
  return tickers.length === article.tickers.length ? article : { ...article, tickers };
}

/** A page size as the store applies it: the contract's bounds on `limit`, whatever the caller passed. */
export function clampLimit(limit: number, bounds: { min: number; max: number }): number {
  if (!Number.isFinite(limit)) return bounds.max;
  return Math.min(bounds.max, Math.max(bounds.min, Math.trunc(limit)));
}
