/** listJson (SQLite-built JSON, the list hot path) says exactly what list + presentArticle say. */
import { describe, expect, it } from 'vitest';
import { presentArticle } from '../../src/domain/articles.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

describe('articles serialised by the store', () => {
  it('match JSON.stringify of the presented article, for both variants, with and without an urgency filter', async () => {
    const store = new SqliteStore(':memory:');
    const now = Date.parse('2026-11-21T12:00:00Z');
    await store.articles.insert(
      [
        {
          content: 'Plain "quoted" \\ text, ünïcödé €, line\nbreak, tab\t',
          urgency: 'regular',
          sentiment: null,
          published_at: null,
          tickers: [],
        },
        {
          content: 'Fed raises rates',
          urgency: 'breaking',
          sentiment: 'hawkish',
          published_at: '2026-11-21T11:59:00+01:00',
          tickers: [{ ticker: 'BRK.B', sentiment: 'positive' }],
        },
      ],
      now,
    );
    for (const urgency of [undefined, 'breaking' as const]) {
      const q = { afterMs: 0, limit: 10, ...(urgency ? { urgency } : {}) };
      const rows = await store.articles.list(q);
      expect(rows.length).toBeGreaterThan(0);
      for (const withTickers of [true, false]) {
        expect(await store.articles.listJson(q, withTickers)).toEqual(
          rows.map((a) => JSON.stringify(presentArticle(a, withTickers))),
        );
      }
    }
    store.close();
  });
});
