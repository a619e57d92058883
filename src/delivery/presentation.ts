/** An article is serialised once per variant however many subscribers receive it; the bytes are shared. */
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import type { FeedEntry } from './ports.js';
import { textFrames } from './frames.js';

/** WebSocket text frames of these entries, one message per article, presented with or without `tickers`. */
export function articleFrames(entries: readonly FeedEntry[], withTickers: boolean): Buffer {
  return textFrames(entries.map((e) => JSON.stringify(presentArticle(e.article, withTickers))));
}

/** One value per article and variant, built on first need and held as long as the article object (WeakMap). */
export class PresentationCache<V> {
  private readonly byArticle = new WeakMap<StoredArticle, Map<string, V>>();
  /** How many values were built (for tests and benchmarks: one per article and variant). */
  built = 0;

  constructor(private readonly build: (article: StoredArticle, variant: string) => V) {}

  of(article: StoredArticle, variant: string): V {
    let byVariant = this.byArticle.get(article);
    if (!byVariant) this.byArticle.set(article, (byVariant = new Map()));
    let value = byVariant.get(variant);
    if (value === undefined) {
      value = this.build(article, variant);
      this.built++;
      byVariant.set(variant, value);
    }
    return value;
  }
}
