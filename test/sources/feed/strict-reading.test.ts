/**
 * What a feed writes is read by its declared type and nothing else: numbers are decimal digits (then
 * clamped to a documented range), strings are strings. A value of another shape is absent, never
 * converted.
 */
import { describe, expect, it } from 'vitest';
import { FEED_FLOOR_MAX_SECONDS, parseFeed } from '../../../src/sources/feed/index.js';
import { feedLevelTexts, readDecimal } from '../../../src/sources/feed/numbers.js';
import { decodeFeedBytes } from '../../../src/sources/feed/charset.js';
import { FeedError } from '../../../src/sources/feed/errors.js';

const BASE = 'https://fetched.example/feeds/wire';
const parse = (text: string) => parseFeed(Buffer.from(text, 'utf8'), { baseUrl: BASE });

const ITEM = '<item><guid>g-1</guid><title>Copper rises</title></item>';
const rssWith = (channel: string) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>Wire</title>${channel}${ITEM}</channel></rss>`;
const SY = 'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"';
const rdfWith = (channel: string) =>
  `<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" ${SY}>` +
  `<channel rdf:about="https://wire.example/"><title>Wire</title><link>https://wire.example/</link>${channel}</channel>` +
  '<item rdf:about="https://wire.example/1"><title>Copper rises</title><link>https://wire.example/1</link></item></rdf:RDF>';
const atomWith = (feed: string) =>
  `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" ${SY}><title>Wire</title><id>urn:wire</id><updated>2026-11-24T10:00:00Z</updated>${feed}` +
  '<entry><id>urn:1</id><title>Copper rises</title><updated>2026-11-24T10:00:00Z</updated></entry></feed>';

describe('a number is decimal digits, clamped to its range', () => {
  it('reads digits with XML whitespace around them', () => {
    expect(readDecimal('30', 1, 1440)).toBe(30);
    expect(readDecimal(' \n\t30\r\n ', 1, 1440)).toBe(30);
    expect(readDecimal('0030', 1, 1440)).toBe(30);
  });
  it('clamps what is too large, whatever its length; what is below the range is unreadable', () => {
    expect(readDecimal('1441', 1, 1440)).toBe(1440);
    expect(readDecimal('99999999999999999999', 1, 1440)).toBe(1440);
    expect(readDecimal('9'.repeat(5000), 1, 1440)).toBe(1440);
    expect(readDecimal('0', 1, 1440)).toBeNull();
  });
  it('hex, exponent, fraction, sign, inner space, other digits and nothing are unreadable', () => {
    for (const t of [
      '0x10',
      '1e3',
      '1E3',
      '1.5',
      '.5',
      '-5',
      '+5',
      '1 0',
      '١٠',
      '１０',
      'Infinity',
      'NaN',
      '',
      ' ',
      '\u00a030',
    ]) {
      expect(readDecimal(t, 0, 1440), JSON.stringify(t)).toBeNull();
    }
    expect(readDecimal(undefined, 0, 1440)).toBeNull();
  });
});

describe('RSS <ttl>: minutes, read strictly, the floor at most a day', () => {
  const floor = (ttl: string) => parse(rssWith(`<ttl>${ttl}</ttl>`)).minIntervalSeconds;
  it('30 is 30 minutes; whitespace around it and CDATA are fine', () => {
    expect(floor('30')).toBe(1800);
    expect(floor('\n  30\n')).toBe(1800);
    expect(floor('<![CDATA[30]]>')).toBe(1800);
  });
  it('a huge ttl is a day (never a number a database column cannot hold)', () => {
    expect(floor('99999999999999999999')).toBe(FEED_FLOOR_MAX_SECONDS);
    expect(floor('1441')).toBe(FEED_FLOOR_MAX_SECONDS);
    expect(floor('1440')).toBe(86_400);
  });
  it('0x10, 1e3, -5, 1.5, 0 and text are no floor at all', () => {
    for (const t of ['0x10', '1e3', '-5', '1.5', '0', 'soon', '3 0', '&#51;0']) expect(floor(t), t).toBeNull();
  });
  it("a <ttl> inside an item or a comment is not the channel's", () => {
    expect(
      parse(
        `<?xml version="1.0"?><rss version="2.0"><channel><title>W</title><item><title>A</title><ttl>60</ttl></item></channel></rss>`,
      ).minIntervalSeconds,
    ).toBeNull();
    expect(parse(rssWith('<!-- <ttl>60</ttl> --><ttl>0x10</ttl>')).minIntervalSeconds).toBeNull();
  });
});

describe('sy:updatePeriod / sy:updateFrequency: read strictly, the floor from 1 s to a day', () => {
  const rdf = (period: string | null, frequency: string | null) =>
    parse(
      rdfWith(
        `${period === null ? '' : `<sy:updatePeriod>${period}</sy:updatePeriod>`}${frequency === null ? '' : `<sy:updateFrequency>${frequency}</sy:updateFrequency>`}`,
      ),
    ).minIntervalSeconds;
  it('hourly twice is 30 minutes; the frequency defaults to 1, the period to daily', () => {
    expect(rdf('hourly', '2')).toBe(1800);
    expect(rdf(' Hourly ', null)).toBe(3600);
    expect(rdf(null, '4')).toBe(21_600);
  });
  it('a period longer than a day is a day; a huge frequency is 1 s', () => {
    expect(rdf('yearly', '1')).toBe(FEED_FLOOR_MAX_SECONDS);
    expect(rdf('weekly', null)).toBe(FEED_FLOOR_MAX_SECONDS);
    expect(rdf('hourly', '99999999999999999999')).toBe(1);
  });
  it('a frequency in hex, with an exponent, fractional, zero or negative, and an unknown period, are no floor', () => {
    for (const f of ['0x2', '2e0', '1.5', '0', '-2']) expect(rdf('hourly', f), f).toBeNull();
    for (const p of ['constructor', '__proto__', 'toString', 'fortnightly']) expect(rdf(p, '1'), p).toBeNull();
  });
  it('Atom and RSS 2.0 read them the same way, under any prefix bound to the module', () => {
    expect(
      parse(atomWith('<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>0x2</sy:updateFrequency>'))
        .minIntervalSeconds,
    ).toBeNull();
    expect(
      parse(atomWith('<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>'))
        .minIntervalSeconds,
    ).toBe(1800);
    const rss =
      `<?xml version="1.0"?><rss version="2.0" xmlns:syn="http://purl.org/rss/1.0/modules/syndication/"><channel><title>W</title>` +
      `<syn:updatePeriod>hourly</syn:updatePeriod><syn:updateFrequency>4</syn:updateFrequency><ttl>5</ttl>${ITEM}</channel></rss>`;
    expect(parse(rss).minIntervalSeconds).toBe(900);
  });
});

describe('the feed-level elements are found in the document text, not inside items, comments or CDATA', () => {
  const wanted = new Set(['ttl', 'updatefrequency']);
  it('takes the first child of the channel (RSS, RDF) or the feed (Atom)', () => {
    expect(
      feedLevelTexts('<rss><channel><item><ttl>1</ttl></item><ttl>2</ttl><ttl>3</ttl></channel></rss>', wanted),
    ).toEqual(new Map([['ttl', '2']]));
    expect(
      feedLevelTexts(
        '<feed><entry><sy:updateFrequency>1</sy:updateFrequency></entry><sy:updateFrequency>7</sy:updateFrequency></feed>',
        wanted,
      ),
    ).toEqual(new Map([['updatefrequency', '7']]));
  });
  it('skips comments, processing instructions, a DOCTYPE with an internal subset, and CDATA elsewhere', () => {
    const xml =
      '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x "<ttl>9</ttl>">]><rss><channel><description><![CDATA[<ttl>8</ttl>]]></description><!-- <ttl>7</ttl> --><ttl a="x>y">6</ttl></channel></rss>';
    expect(feedLevelTexts(xml, wanted)).toEqual(new Map([['ttl', '6']]));
  });
  it('an element never closed is not read', () => {
    expect(feedLevelTexts('<rss><channel><ttl>5', wanted)).toEqual(new Map());
  });
});

describe('JSON Feed fields of the wrong type are absent, never converted (JSON Feed 1.1 types)', () => {
  const json = (items: unknown[], feed: Record<string, unknown> = {}) =>
    parse(JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'Wire', ...feed, items }));

  it('external_url: [1, 2] is no link (not "1" on the feed\'s host); url: {} neither', () => {
    const feed = json([
      { id: 'a', title: 'Copper rises', external_url: [1, 2] },
      { id: 'b', title: 'Oil falls', url: {}, external_url: 'https://other.example/b' },
    ]);
    expect(feed.items.map((i) => i.url)).toEqual([null, 'https://other.example/b']);
  });
  it('title: 42 is no title; a summary of the wrong type gives way to the text that is a string', () => {
    const feed = json([{ id: 'a', title: 42, summary: ['x'], content_text: 'Copper rises on supply worries' }]);
    expect(feed.items[0]).toMatchObject({ title: null, summary: 'Copper rises on supply worries' });
    expect(json([{ id: 'a', title: true, content_html: { html: 'x' } }]).items[0]).toMatchObject({
      title: null,
      summary: null,
    });
  });
  it('the feed title, dates and keys in another case follow the same rule', () => {
    const feed = json(
      [
        {
          id: 'a',
          Title: 'Wrong key',
          title: 'Right key',
          date_published: 1_764_000_000,
          date_modified: '2026-11-24T10:00:00Z',
        },
      ],
      { title: 42 },
    );
    expect(feed.title).toBeNull();
    expect(feed.items[0]).toMatchObject({ title: 'Right key', publishedAt: '2026-11-24T10:00:00.000Z' });
  });
  it("an id given as a number is its decimal text (the spec's one coercion); any other type is no id", () => {
    const feed = json([
      { id: 7, title: 'A' },
      { id: [1], title: 'B' },
      { id: { x: 1 }, title: 'C' },
      { id: true, title: 'D' },
      { id: ' x ', title: 'E' },
    ]);
    expect(feed.items.map((i) => i.guid)).toEqual(['7', null, null, null, 'x']);
  });
  it('items that are not objects are not items; items that are not an array are none', () => {
    expect(json([42, 'x', null, [{ id: 'n' }], { id: 'ok', title: 'Gold steadies' }]).items.map((i) => i.guid)).toEqual(
      ['ok'],
    );
    expect(
      parse(
        JSON.stringify({
          version: 'https://jsonfeed.org/version/1.1',
          title: 'Wire',
          items: { 0: { id: 'a', title: 'A' } },
        }),
      ).items,
    ).toEqual([]);
  });
  it("keys named like Object members are the feed's own values only", () => {
    const text =
      '{"version":"https://jsonfeed.org/version/1.1","title":"Wire","items":[{"id":"a","__proto__":{"title":"injected"},"constructor":"c"}]}';
    expect(parse(text).items[0]).toMatchObject({ guid: 'a', title: null });
  });
});

describe('a JSON Feed id written as an integer past 2^53 is its digits as written', () => {
  it('two items with neighbouring snowflake ids keep two ids (as doubles they were one, the second item taken for the first)', () => {
    const text =
      '{"version":"https://jsonfeed.org/version/1.1","title":"Wire","items":[' +
      '{"id":1234567890123456789,"title":"Acme beats estimates"},{"id":1234567890123456790,"title":"Zeta recalls cars"},' +
      '{"id":-9007199254740993,"title":"C"},{"id":7,"title":"D"},{"id":1e3,"title":"E"}]}';
    expect(parse(text).items.map((i) => i.guid)).toEqual([
      '1234567890123456789',
      '1234567890123456790',
      '-9007199254740993',
      '7',
      '1000',
    ]);
  });
  it('a feed with such an id and a deeply nested extension value is still read', () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const text =
      '{"version":"https://jsonfeed.org/version/1.1","title":"Wire","items":[' +
      `{"id":"a","title":"Acme beats estimates","_ext":${deep}},{"id":1234567890123456789,"title":"Zeta recalls cars"}]}`;
    expect(parse(text).items.map((i) => i.title)).toEqual(['Acme beats estimates', 'Zeta recalls cars']);
    expect(parse(text.replace('1234567890123456789', '7')).items.map((i) => i.guid)).toEqual(['a', '7']);
  });
});

describe('labels and names the feed writes are looked up as data', () => {
  it('a charset named like an Object member is an unsupported charset, named as written', () => {
    const bytes = Buffer.from('<?xml version="1.0" encoding="constructor"?><rss>\xe9</rss>', 'latin1');
    expect(() => decodeFeedBytes(bytes, null)).toThrow(new FeedError('charset', 'unsupported charset "constructor"'));
  });
});
