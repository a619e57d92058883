/** The sources pipeline: feed items to what the store ingests (mapping, external ids, length, enrichment, keys). */
import { describe, expect, it } from 'vitest';
import { articleRules } from '../../src/contract/index.js';
import { nearDuplicateKeys } from '../../src/dedup/near.js';
import type { FeedItem } from '../../src/sources/feed/index.js';
import { mapItemSafely } from '../../src/sources/feed/parse.js';
import {
  EXTERNAL_ID_MAX_LENGTH,
  externalIdOf,
  fitHeadline,
  prepareFeedItem,
  toSourcedItems,
} from '../../src/sources/pipeline.js';
import { pgReachable, pgTestStores } from '../support/postgres.js';

const feedItem = (over: Partial<FeedItem> = {}): FeedItem => ({
  guid: 'g-1',
  title: 'Acme beats estimates',
  summary: 'Acme Corp reported earnings above expectations.',
  url: 'https://news.example/acme?utm_source=rss',
  publishedAt: '2026-11-22T05:55:44.000Z',
  ...over,
});
const wire = { name: 'wire', urgency: 'auto' as const };
const pgUp = await pgReachable();

describe('mapping: content is the headline, else the summary; published_at, url and source as given', () => {
  it('maps a full item (its url is the canonical link)', () => {
    const [s] = toSourcedItems(wire, [feedItem()]);
    expect(s).toMatchObject({
      source: 'wire',
      externalId: 'g-1',
      canonicalUrl: 'https://news.example/acme',
      article: {
        content: 'Acme beats estimates',
        published_at: '2026-11-22T05:55:44.000Z',
        url: 'https://news.example/acme',
        source: 'wire',
      },
    });
  });

  it('uses the summary when there is no title, and never invents a date', () => {
    const [s] = toSourcedItems(wire, [feedItem({ title: null, publishedAt: null })]);
    expect(s!.article.content).toBe('Acme Corp reported earnings above expectations.');
    expect(s!.article.published_at).toBeNull();
  });

  it('leaves out items with no text (the caller counts them), keeping the order of the others', () => {
    const out = toSourcedItems(wire, [
      feedItem({ guid: 'a' }),
      feedItem({ guid: 'b', title: '  ', summary: null }),
      feedItem({ guid: 'c', title: null, summary: null }),
    ]);
    expect(out.map((s) => s.externalId)).toEqual(['a']);
  });
});

describe('external id: the guid, else the canonical URL, else a hash of the text and the date', () => {
  it('prefers the guid', () => {
    expect(toSourcedItems(wire, [feedItem({ guid: '  urn:x:1 ' })])[0]!.externalId).toBe('urn:x:1');
  });

  it('falls back to the canonical URL: tracking variants of one link are the same item', () => {
    const a = toSourcedItems(wire, [feedItem({ guid: null, url: 'https://News.example/acme?utm_source=rss#top' })])[0]!;
    const b = toSourcedItems(wire, [feedItem({ guid: null, url: 'https://news.example/acme?utm_medium=email' })])[0]!;
    expect(a.externalId).toBe('https://news.example/acme');
    expect(b.externalId).toBe(a.externalId);
  });

  it('falls back to a stable hash of text and date when there is neither', () => {
    const one = feedItem({ guid: null, url: null });
    const id = toSourcedItems(wire, [one])[0]!.externalId;
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(toSourcedItems(wire, [{ ...one }])[0]!.externalId).toBe(id);
    expect(toSourcedItems(wire, [{ ...one, publishedAt: '2026-11-23T00:00:00.000Z' }])[0]!.externalId).not.toBe(id);
  });

  it('stores an over-long id as its hash', () => {
    const long = 'x'.repeat(EXTERNAL_ID_MAX_LENGTH + 1);
    expect(externalIdOf(feedItem({ guid: long }), null, 'text')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(externalIdOf(feedItem({ guid: 'x'.repeat(EXTERNAL_ID_MAX_LENGTH) }), null, 'text')).toHaveLength(
      EXTERNAL_ID_MAX_LENGTH,
    );
  });
});

/** Two items whose guids are `first` and `second`, ingested on PostgreSQL: each item's answer. */
async function ingestOnPostgres(first: string, second: string): Promise<string[]> {
  const stores = pgTestStores();
  const store = await stores.open();
  try {
    const items = toSourcedItems(wire, [
      feedItem({ guid: first, title: 'Acme beats estimates', url: null }),
      feedItem({ guid: second, title: 'Zeta recalls cars', url: null }),
    ]);
    return (await store.sources.ingestItems(items, Date.now())).map((x) => x.status);
  } finally {
    await store.close();
    await stores.cleanup();
  }
}

describe('a guid holding a lone surrogate is kept as its hash: two such guids stay two items', () => {
  it('the id is sha256:… of its code units; another lone surrogate is another id', () => {
    const id = externalIdOf(feedItem({ guid: 'c\udc00' }), null, 'text');
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(externalIdOf(feedItem({ guid: 'c\udc01' }), null, 'text')).not.toBe(id);
    expect(externalIdOf(feedItem({ guid: 'c\ud83d\udcc8' }), null, 'text')).toBe('c\ud83d\udcc8');
  });
  it.skipIf(!pgUp)('two items of one feed with such guids are both stored (PostgreSQL)', async () => {
    expect(await ingestOnPostgres('c\udc00', 'c\udc01')).toEqual(['stored', 'stored']);
  });
});

describe("a guid holding a NUL character is kept as its hash: every store can hold it, the feed's other items go in", () => {
  it('the id is sha256:… and stable; another guid is another id', () => {
    const id = externalIdOf(feedItem({ guid: 'nul\u0000id' }), null, 'text');
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(externalIdOf(feedItem({ guid: 'nul\u0000id' }), null, 'text')).toBe(id);
    expect(externalIdOf(feedItem({ guid: 'nul\u0000other' }), null, 'text')).not.toBe(id);
  });
  it.skipIf(!pgUp)('on PostgreSQL the items of that poll are stored (the poll failed as a whole)', async () => {
    expect(await ingestOnPostgres('nul\u0000id', 'fine')).toEqual(['stored', 'stored']);
  });
});

describe("length: a headline longer than the contract's maxLength is cut at a word boundary, with an ellipsis", () => {
  const max = articleRules.contentMaxLength;

  it('keeps a headline of exactly maxLength', () => {
    const text = 'a'.repeat(max);
    expect(fitHeadline(text)).toBe(text);
  });

  it('cuts a longer one to at most maxLength, after a whole word', () => {
    const text = 'word '.repeat(Math.ceil(max / 5) + 10).trim();
    const fitted = fitHeadline(text);
    expect(fitted.length).toBeLessThanOrEqual(max);
    expect(fitted.endsWith('word…')).toBe(true);
    const [s] = toSourcedItems(wire, [feedItem({ title: text })]);
    expect(s!.article.content).toBe(fitted);
  });

  it('counts characters as the contract does (an emoji is one) and never splits a surrogate pair', () => {
    expect(fitHeadline('📈'.repeat(10), 6)).toBe('📈📈📈📈📈…');
    const fitted = fitHeadline('📈'.repeat(max + 5));
    expect([...fitted]).toHaveLength(max);
  });
});

describe('enrichment: the source urgency setting, or auto rules; tickers and keys from the text', () => {
  it('uses a fixed urgency as set', () => {
    expect(toSourcedItems({ name: 'w', urgency: 'flash' }, [feedItem()])[0]!.article.urgency).toBe('flash');
  });

  it('derives urgency under auto', () => {
    expect(toSourcedItems(wire, [feedItem({ title: 'BREAKING: Fed cuts rates' })])[0]!.article.urgency).toBe(
      'breaking',
    );
    expect(toSourcedItems(wire, [feedItem({ title: 'Fed minutes released' })])[0]!.article.urgency).toBe('regular');
  });

  it('finds cashtag tickers and carries the near-duplicate keys of the content', () => {
    const [s] = toSourcedItems(wire, [feedItem({ title: '$AAPL jumps after results' })]);
    expect(s!.article.tickers.map((t) => t.ticker)).toContain('AAPL');
    expect(s!.nearKeys).toEqual(nearDuplicateKeys('$AAPL jumps after results'));
    expect(s!.nearKeys.length).toBeGreaterThan(0);
  });
});

describe("one feed item whose reading throws is that item's failure, never its feed's", () => {
  it('carries the failure with the guid it could still read, and the poll reports it failed, not stored', () => {
    const bad = mapItemSafely(
      () => {
        throw new RangeError('a message quoting the feed, never reported');
      },
      () => 'guid-7',
    );
    expect(bad).toEqual({
      guid: 'guid-7',
      title: null,
      summary: null,
      url: null,
      publishedAt: null,
      failed: 'RangeError',
    });
    expect(prepareFeedItem({ name: 'wire', urgency: 'auto' }, bad)).toEqual({
      failed: { guid: 'guid-7', errClass: 'RangeError' },
    });
  });
  it('has no guid when reading that throws too, and reads a good item as before', () => {
    const fail = () => {
      throw new Error('x');
    };
    expect(mapItemSafely(fail, fail).guid).toBeNull();
    const good = mapItemSafely(
      () => ({ guid: 'g', title: 'Oil jumps', summary: null, url: null, publishedAt: null }),
      fail,
    );
    expect(good.failed).toBeUndefined();
    expect('failed' in prepareFeedItem({ name: 'wire', urgency: 'auto' }, good)).toBe(false);
  });
});
