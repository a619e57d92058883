/** A feed item whose reading throws is reported with the id a stored item would have had (JSON Feed's numeric ids too). */
import { describe, expect, it, vi } from 'vitest';
import { parseFeed } from '../../../src/sources/feed/index.js';

const MARK = 'reading this title throws';

// Stands for a bug in reading one item: the title holding MARK throws, as an unexpected error would.
vi.mock('../../../src/sources/feed/text.js', async (original) => {
  const real = await original<typeof import('../../../src/sources/feed/text.js')>();
  return {
    ...real,
    toPlainText: (raw: string | null | undefined) => {
      if (raw?.includes(MARK)) throw new TypeError('a bug');
      return real.toPlainText(raw);
    },
  };
});

const jsonFeed = (items: object[]) =>
  new TextEncoder().encode(JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'Desk', items }));

describe('a feed item whose reading throws keeps the id a stored item would have', () => {
  it('a JSON Feed item with a numeric id: failed with its decimal text, like the item read beside it', () => {
    const feed = parseFeed(
      jsonFeed([
        { id: 7, title: `Oil jumps ${MARK}` },
        { id: 8, title: 'Gold slips' },
        { id: ' g-9 ', title: `Copper rises ${MARK}` },
      ]),
      { baseUrl: 'https://desk.example/' },
    );
    expect(feed.items.map((i) => [i.guid, i.failed ?? 'read'])).toEqual([
      ['7', 'TypeError'],
      ['8', 'read'],
      ['g-9', 'TypeError'],
    ]);
  });
});
