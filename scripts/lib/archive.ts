/**
 * The benchmarks' archive: `count` look-alike headlines spread over the last 6 days, oldest first,
 * inserted `batch` at a time at fixed (back-dated) receive times.
 */
import type { ArticleStore, NewArticle } from '../../src/store/ports/index.js';

const URGENCIES = ['regular', 'regular', 'regular', 'flash', 'breaking'] as const;
const SPAN_MS = 6 * 24 * 3600_000;

export async function seedArchive(
  store: Pick<ArticleStore, 'insert'>,
  count: number,
  opts: { now: number; batch: number; onBatch?: () => void },
): Promise<void> {
  for (let start = 0; start < count; start += opts.batch) {
    const n = Math.min(opts.batch, count - start);
    const articles: NewArticle[] = Array.from({ length: n }, (_, i) => ({
      content: `Headline ${start + i}: markets move on central bank remarks and earnings`,
      urgency: URGENCIES[(start + i) % URGENCIES.length]!,
      sentiment: (start + i) % 3 === 0 ? 'positive' : null,
      published_at: null,
      tickers: [{ ticker: 'SPY', sentiment: 'neutral' }],
    }));
    await store.insert(articles, opts.now - Math.round(((count - start) / count) * SPAN_MS));
    opts.onBatch?.();
  }
}
