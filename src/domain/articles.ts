/** How an article is shown to a key: `tickers` only when the plan includes per-ticker sentiment. */
import { articleRules, tickerSentiments, type Article, type TickerSentiment } from '../contract/index.js';
import { longerThan } from './text.js';

/** An article as stored: always with its tickers. */
export type StoredArticle = Omit<Article, 'tickers'> & { tickers: TickerSentiment[] };

/** A ticker as an input may give it: `relevance` left out means the article is about it (1). */
export type TickerInput = Omit<TickerSentiment, 'relevance'> & { relevance?: number };

export function presentArticle(article: StoredArticle, withTickers: boolean): Article {
  if (withTickers) return article;
  const { tickers: _omit, ...rest } = article;
  return rest;
}

/**
 * An article as the contract's Article schema allows, whatever the input: valid unique tickers, the first
 * `tickersMaxItems`, relevance 0-1 to two decimals (1 when absent), most relevant first. Too long content throws.
 */
export function conformArticle<T extends { content: string; tickers: TickerInput[] }>(
  article: T,
): T & { tickers: TickerSentiment[] } {
  if (longerThan(article.content, articleRules.contentMaxLength)) {
    throw new RangeError(`content is longer than ${articleRules.contentMaxLength} characters`);
  }
  const seen = new Set<string>();
  const tickers: TickerSentiment[] = [];
  for (const t of article.tickers) {
    if (tickers.length === articleRules.tickersMaxItems) break;
    if (!articleRules.tickerPattern.test(t.ticker) || seen.has(t.ticker) || !tickerSentiments.includes(t.sentiment))
      continue;
    seen.add(t.ticker);
    const r = t.relevance;
    const relevance =
      typeof r === 'number' && Number.isFinite(r) ? Math.round(Math.min(1, Math.max(0, r)) * 100) / 100 : 1;
    tickers.push({ ticker: t.ticker, sentiment: t.sentiment, relevance });
  }
  return { ...article, tickers: byRelevance(tickers) };
}

/** Most relevant first; equal relevance keeps the given order (first mention). */
export function byRelevance<T extends { relevance: number }>(tickers: readonly T[]): T[] {
  return tickers
    .map((t, i) => ({ t, i }))
    .sort((a, b) => b.t.relevance - a.t.relevance || a.i - b.i)
    .map((x) => x.t);
}

/** A page size as the store applies it: the contract's bounds on `limit`, whatever the caller passed. */
export function clampLimit(limit: number, bounds: { min: number; max: number }): number {
  if (!Number.isFinite(limit)) return bounds.max;
  return Math.min(bounds.max, Math.max(bounds.min, Math.trunc(limit)));
}

/** Whether one of `symbols` has at least `minRelevance` in the article (the `tickers` filter's rule). */
export function isAbout(
  article: { tickers: readonly TickerSentiment[] },
  symbols: ReadonlySet<string>,
  minRelevance: number,
): boolean {
  for (const t of article.tickers) if (symbols.has(t.ticker) && t.relevance >= minRelevance) return true;
  return false;
}
