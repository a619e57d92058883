/** How an article is shown to a key: `tickers` only when the plan includes per-ticker sentiment. */
import type { Article, TickerSentiment } from '../contract/index.js';

/** An article as stored: always with its tickers. */
export type StoredArticle = Omit<Article, 'tickers'> & { tickers: TickerSentiment[] };

export function presentArticle(article: StoredArticle, withTickers: boolean): Article {
  if (withTickers) return article;
  const { tickers: _omit, ...rest } = article;
  return rest;
}
