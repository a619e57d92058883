/**
 * The identity step (src/ingest/identity.ts) and the operator scope (src/ingest/pipeline.ts): one describe per rule.
 */
import { describe, expect, it } from 'vitest';
import { articleLink, identify, OPERATOR_SOURCE, URL_MAX_LENGTH } from '../../src/ingest/identity.js';
import { isUndatedRepeatKey, repeatHeadline, repeatKey } from '../../src/dedup/repeat.js';
import { operatorItem, operatorOffer } from '../../src/ingest/pipeline.js';
import type { NewArticle } from '../../src/store/ports/index.js';
import { ingest } from '../../src/cli/operator.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

const article = (content: string, over: Partial<NewArticle> = {}): NewArticle => ({
  content,
  urgency: 'regular',
  sentiment: null,
  published_at: null,
  tickers: [],
  ...over,
});

describe('a repeat is the same headline: case, punctuation, spacing and compatibility forms aside', () => {
  it('normalises what does not change the words', () => {
    expect(repeatHeadline('  ACME Corp beats estimates — shares JUMP!  ')).toBe(
      repeatHeadline('Acme corp beats estimates, shares jump'),
    );
    expect(repeatHeadline('Ｆｅｄ raises rates')).toBe(repeatHeadline('Fed raises rates'));
  });
  it('keeps what changes the story: another word, another figure', () => {
    expect(repeatHeadline('Acme to buy Beta for $2bn')).not.toBe(repeatHeadline('Acme to buy Beta for $2.4bn'));
    expect(repeatHeadline('Oil rises 1.5%')).not.toBe(repeatHeadline('Oil rises 15%'));
    expect(repeatHeadline('Fed raises rates')).not.toBe(repeatHeadline('Fed holds rates'));
  });
});

describe("a figure's sign, currency or comparison is part of it: a repeat differs by them", () => {
  it('+2% is not -2%, $5 million not €5 million, >1.10 not <1.10; punctuation around words and after figures still is none', () => {
    expect(repeatHeadline('Nasdaq futures +2% after CPI')).not.toBe(repeatHeadline('Nasdaq futures -2% after CPI'));
    expect(repeatHeadline('Dow +500 points')).not.toBe(repeatHeadline('Dow −500 points'));
    expect(repeatHeadline('Acme fined $5 million')).not.toBe(repeatHeadline('Acme fined €5 million'));
    expect(repeatHeadline('EUR/USD >1.10 after ECB')).not.toBe(repeatHeadline('EUR/USD <1.10 after ECB'));
    expect(repeatHeadline('Oil rises 1.5%, gold falls')).toBe(repeatHeadline('oil rises 1.5% - gold falls!'));
    expect(repeatHeadline('Acme Q3 profit: $2bn.')).toBe(repeatHeadline('ACME Q3 profit $2bn'));
    // Only a sign, currency or comparison opens a figure: a word's hyphen or a quote before a year does not.
    expect(repeatHeadline('COVID-19 cases rise')).toBe(repeatHeadline('COVID 19 cases rise'));
    expect(repeatHeadline('Outlook for ’25')).toBe(repeatHeadline("Outlook for '25"));
    expect(repeatHeadline('Dow −500 points')).toBe(repeatHeadline('Dow -500 points'));
  });
  it('fns articles ingest stores both lines of such a pair (the second was dropped as a same-headline repeat)', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const report = await ingest(
        store.sources,
        ['{"content":"Nasdaq futures +2% after CPI"}', '{"content":"Nasdaq futures -2% after CPI"}'],
        () => 1_800_000_000_000,
      );
      expect(report.duplicates).toEqual([]);
      expect(report.ingested).toBe(2);
    } finally {
      store.close();
    }
  });
});

describe('a repeat has the same published time: the same instant in any offset, or none', () => {
  it('one instant, two spellings: one key; another day: another key', () => {
    expect(repeatKey('Gold hits record', '2026-11-21T10:00:00Z')).toBe(
      repeatKey('gold hits record!', '2026-11-21T11:00:00.000+01:00'),
    );
    expect(repeatKey('Gold hits record', '2026-11-22T10:00:00Z')).not.toBe(
      repeatKey('Gold hits record', '2026-11-21T10:00:00Z'),
    );
  });
  it('without a time the key is undated (the store matches it within the near-duplicate window only)', () => {
    expect(isUndatedRepeatKey(repeatKey('Markets open mixed', null))).toBe(true);
    expect(isUndatedRepeatKey(repeatKey('Markets open mixed', '2026-11-21T10:00:00Z'))).toBe(false);
  });
});

describe("an article's url is its canonical link, or null", () => {
  it('canonical, null for no http(s) link, null when longer than the contract allows', () => {
    expect(articleLink('HTTPS://Example.com:443/a/?utm_source=x#y')).toBe('https://example.com/a');
    expect(articleLink('see the website')).toBeNull();
    expect(articleLink(null)).toBeNull();
    expect(articleLink(`https://example.com/${'a'.repeat(URL_MAX_LENGTH)}`)).toBeNull();
  });
  it('identify gives the item its canonical link, url, repeat key and near keys', () => {
    const item = identify(
      'wire',
      'g-1',
      article('Fed raises rates', { url: 'https://example.com/fed/amp', published_at: '2026-11-21T10:00:00Z' }),
    );
    expect(item).toMatchObject({
      source: 'wire',
      externalId: 'g-1',
      canonicalUrl: 'https://example.com/fed',
      article: { source: 'wire', url: 'https://example.com/fed' },
    });
    expect(item.repeatKey).toBe(repeatKey('Fed raises rates', '2026-11-21T10:00:00Z'));
    expect(item.nearKeys.length).toBeGreaterThan(0);
  });
});

describe('an operator line without source is scoped to `operator` and shows no source', () => {
  it('scope operator, source null; a named source is both', () => {
    expect(operatorItem(article('ECB holds rates'))).toMatchObject({
      source: OPERATOR_SOURCE,
      article: { source: null },
    });
    expect(operatorItem(article('ECB holds rates', { source: 'desk' }))).toMatchObject({
      source: 'desk',
      article: { source: 'desk' },
    });
  });
  it('the same line is the same item (its id: the canonical link, else text and time)', () => {
    expect(operatorItem(article('A', { url: 'https://x.example/a?utm_source=1' })).externalId).toBe(
      'https://x.example/a',
    );
    expect(operatorItem(article('A')).externalId).toBe(operatorItem(article('A')).externalId);
    expect(operatorItem(article('A', { published_at: '2026-11-21T10:00:00Z' })).externalId).not.toBe(
      operatorItem(article('A')).externalId,
    );
  });
  it('a line that cannot be read is invalid with its error', () => {
    expect(operatorOffer(3, '{nope')).toMatchObject({ line: 3, error: expect.stringMatching(/^not valid JSON/) });
    expect(operatorOffer(4, '{"content":"x","source":"no spaces please"}')).toMatchObject({
      line: 4,
      error: expect.stringContaining('source must be a source name'),
    });
  });
});
