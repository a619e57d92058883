/** The subscriber filters of the delivery core: the ticker filter (stream and webhook `tickers`). Pure. */
import { minRelevanceDefault } from '../contract/index.js';
import { isAbout, type StoredArticle } from '../domain/articles.js';

/** A subscriber's `tickers` and `min_relevance`, with a canonical key shared by equal filters. */
export interface TickerFilter {
  key: string;
  symbols: ReadonlySet<string>;
  minRelevance: number;
}

/** The filter of these symbols (null or undefined: no filter); the contract's default minimum when none is given. */
export function tickerFilter(
  symbols: Iterable<string> | null | undefined,
  minRelevance?: number | null,
): TickerFilter | undefined {
  if (!symbols) return undefined;
  const set = new Set(symbols);
  const min = minRelevance ?? minRelevanceDefault;
  return { key: `${[...set].sort().join(',')}@${min}`, symbols: set, minRelevance: min };
}

/** Whether an article is about at least one of the filter's symbols (no filter: every article). */
export function matchesTickers(article: Pick<StoredArticle, 'tickers'>, filter: TickerFilter | undefined): boolean {
  return !filter || isAbout(article, filter.symbols, filter.minRelevance);
}
