/** The store paging suite on the embedded engine, and SQLite's query plan of a filtered page. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/ports/index.js';
import { describeStorePaging } from './paging.suite.js';

const dirs: string[] = [];
const files = new Map<Store, string>();
/** The ticker index's migration version (user_version counts applied migrations). */
const tickerIndexVersion =
  MIGRATIONS.findIndex((m) => typeof m === 'string' && m.includes('CREATE TABLE article_tickers')) + 1;

const open = async () => {
  const d = mkdtempSync(join(tmpdir(), 'fns-paging-'));
  dirs.push(d);
  const store = new SqliteStore(join(d, 'fns.sqlite'));
  files.set(store, join(d, 'fns.sqlite'));
  return store;
};

describeStorePaging('sqlite', {
  leases: false,
  runs: 40,
  open,
  async peer(store) {
    return new SqliteStore(files.get(store)!);
  },
  async rewindTickerIndex(store) {
    const s = store as SqliteStore;
    // The migrations after it run again on reopen: what they add goes too (the identity migration's
    // reason columns, the webhook endpoints).
    s.db.exec('DROP TABLE article_tickers; DROP TABLE IF EXISTS webhook_endpoints');
    s.db.exec('ALTER TABLE seen_items DROP COLUMN reason; ALTER TABLE article_carriers DROP COLUMN reason;');
    s.db.pragma(`user_version = ${tickerIndexVersion - 1}`);
  },
  async reopen(store) {
    const file = files.get(store)!;
    await store.close();
    const again = new SqliteStore(file);
    files.set(again, file);
    return again;
  },
  async cleanup() {
    files.clear();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  },
});

describe('the ticker filter on SQLite: O(log n + limit) per symbol', () => {
  it('reads each symbol as one index range (article_tickers), then the articles by id: no scan of the archive', async () => {
    const s = (await open()) as SqliteStore;
    try {
      const many = Array.from({ length: 3000 }, (_, i) => ({
        content: `a${i}`,
        urgency: (['regular', 'breaking', 'flash'] as const)[i % 3]!,
        sentiment: null,
        published_at: null,
        tickers: [{ ticker: i % 10 ? 'AAPL' : 'MSFT', sentiment: 'neutral' as const }],
      }));
      await s.articles.insert(many, Date.parse('2026-11-21T12:00:00Z'));
      s.db.exec('ANALYZE');
      for (const q of [
        { afterMs: 0, limit: 50, tickers: ['AAPL'] },
        {
          afterMs: 0,
          limit: 50,
          tickers: ['AAPL', 'MSFT'],
          urgency: 'breaking' as const,
          afterId: '01',
          ascending: true,
        },
      ]) {
        const { plan } = s.articles.explainList(q);
        console.log(`EXPLAIN QUERY PLAN (${JSON.stringify(q)}):\n  ${plan.join('\n  ')}`);
        expect(
          plan.some((d) =>
            /SEARCH article_tickers USING ((?:COVERING )?INDEX article_tickers_urgency|PRIMARY KEY) \(ticker=\?/.test(
              d,
            ),
          ),
        ).toBe(true);
        expect(plan.some((d) => /SEARCH articles USING INDEX sqlite_autoindex_articles_1 \(id=\?\)/.test(d))).toBe(
          true,
        );
        expect(plan.filter((d) => /^SCAN (articles|article_tickers)\b/.test(d))).toEqual([]);
        expect(plan.some((d) => /TEMP B-TREE FOR ORDER BY/.test(d))).toBe(false);
      }
    } finally {
      await s.close();
    }
  });
});
