/**
 * The subscriber filters of the delivery core: today the ticker filter (the stream's `tickers`
 * parameter, a webhook endpoint's `tickers`; max accounts only, decided by the adapters). Pure.
 */
import type { StoredArticle } from '../domain/articles.js';

/** A subscriber's `tickers`: the symbols, and a canonical key (sorted, deduplicated) shared by equal filters. */
export interface TickerFilter {
  key: string;
  symbols: ReadonlySet<string>;
}

/** The filter of these symbols (null or undefined: no filter). */
export function tickerFilter(symbols: Iterable<string> | null | undefined): TickerFilter | undefined {
  if (!symbols) return undefined;
  const set = new Set(symbols);
  return { key: [...set].sort().join(','), symbols: set };
}

/** Whether an article is about at least one of the filter's symbols (no filter: every article). */
export function matchesTickers(article: Pick<StoredArticle, 'tickers'>, filter: TickerFilter | undefined): boolean {
  if (!filter) return true;
  for (const t of article.tickers) if (filter.symbols.has(t.ticker)) return true;
  return false;
}
