import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FeedError, parseFeed, type ParsedFeed } from '../../../src/sources/feed/index.js';
import { FEED_FIXTURES, renderFeed, type FeedSpec } from '../fixture-server.js';

const BASE = 'https://fetched.example/path/feed';
const parseFixture = (name: string, contentType?: string): ParsedFeed =>
  parseFeed(readFileSync(path.join(FEED_FIXTURES, name)), { baseUrl: BASE, contentType: contentType ?? null });

function parseError(fn: () => unknown): FeedError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FeedError) return err;
    throw err;
  }
  throw new Error('expected a FeedError');
}

describe('RSS 2.0 items map to plain items', () => {
  const feed = parseFixture('rss2.xml');
  it('knows the format, the title and the ttl floor (30 minutes)', () => {
    expect(feed.format).toBe('rss');
    expect(feed.title).toBe('Wire One & Partners');
    expect(feed.minIntervalSeconds).toBe(1800);
    expect(feed.items).toHaveLength(5);
  });
  it('CDATA with HTML becomes plain text; escaped HTML summaries too', () => {
    expect(feed.items[0]).toEqual({
      guid: 'wire-one-0001',
      title: 'Fed holds rates steady; signals two cuts & more',
      summary: 'The Federal Reserve held rates at 5.25–5.5%. Markets rallied.',
      url: 'https://wire-one.example/news/fed-holds?utm_source=rss&id=7',
      publishedAt: '2025-06-10T09:00:00.000Z',
    });
  });
  it('entities in titles are decoded and whitespace collapsed; an item without guid has guid null', () => {
    expect(feed.items[1]).toMatchObject({
      guid: null,
      title: 'Apple ’s shares rise — AT&T falls',
      publishedAt: '2025-06-11T14:30:00.000Z',
    });
  });
  it('a permalink guid gives the link, dc:date the date; script content is dropped', () => {
    expect(feed.items[2]).toEqual({
      guid: 'https://wire-one.example/news/oil-jumps',
      title: null,
      summary: 'Only a summary: Oil jumps 3%',
      url: 'https://wire-one.example/news/oil-jumps',
      publishedAt: '2025-06-12T07:15:00.000Z',
    });
  });
  it('missing fields are null, an unreadable date is null (never invented), a non-URL guid is no link', () => {
    expect(feed.items[3]).toEqual({
      guid: null,
      title: 'No date, no link, no guid',
      summary: null,
      url: null,
      publishedAt: null,
    });
    expect(feed.items[4]).toMatchObject({ guid: 'wire-one-0005', url: null, publishedAt: null });
  });
});

describe('RSS 0.91 items resolve relative links against the channel link', () => {
  const feed = parseFixture('rss091.xml');
  it('maps both items', () => {
    expect(feed.format).toBe('rss');
    expect(feed.items.map((i) => i.url)).toEqual([
      'http://old-wire.example/stories/dow.html',
      'http://old-wire.example/stories/bonds.html',
    ]);
    expect(feed.items.every((i) => i.guid === null && i.publishedAt === null)).toBe(true);
  });
});

describe('RSS 1.0 (RDF) items', () => {
  const feed = parseFixture('rdf.xml');
  it('use rdf:about as guid, dc:date as date, and sy:updatePeriod/Frequency as the floor (hourly / 2 = 30 min)', () => {
    expect(feed.format).toBe('rdf');
    expect(feed.minIntervalSeconds).toBe(1800);
    expect(feed.items[0]).toEqual({
      guid: 'https://rdf-wire.example/a/1',
      title: 'ECB raises deposit rate',
      summary: 'The ECB raised its deposit rate by 25 basis points.',
      url: 'https://rdf-wire.example/a/1',
      publishedAt: '2025-06-12T23:30:02.000Z',
    });
    expect(feed.items[1]).toMatchObject({
      title: 'Euro & yen steady',
      url: 'https://rdf-wire.example/a/2',
      publishedAt: null,
    });
  });
});

describe('Atom 1.0 entries', () => {
  const feed = parseFixture('atom.xml');
  it('html and xhtml titles become plain text', () => {
    expect(feed.format).toBe('atom');
    expect(feed.title).toBe('Atom Wire');
    expect(feed.items[0]!.title).toBe('Tesla beats estimates & raises guidance');
    expect(feed.items[0]!.summary).toBe('Revenue & margins up.');
  });
  it('links resolve through nested xml:base and prefer rel=alternate', () => {
    expect(feed.items[0]!.url).toBe('https://atom-wire.example/stories/tesla-beats.html#top');
    expect(feed.items[1]!.url).toBe('https://atom-wire.example/feeds/gold');
  });
  it('published wins over updated; updated is used when alone; an impossible date is null', () => {
    expect(feed.items[0]!.publishedAt).toBe('2025-06-12T12:00:00.250Z');
    expect(feed.items[1]!.publishedAt).toBe('2025-06-12T15:00:00.000Z');
    expect(feed.items[2]).toMatchObject({
      guid: 'tag:atom-wire.example,2025:3',
      url: null,
      publishedAt: null,
      summary: null,
    });
  });
  it('content stands in for a missing summary', () => {
    expect(feed.items[1]!.summary).toBe('Gold hit a record high.');
  });
  it('a link with an empty rel is the alternate link, as in RSS', () => {
    const xml = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>W</title>
      <entry><id>e1</id><title>Gold rises</title><updated>2025-06-12T12:00:00Z</updated>
      <link rel="related" href="https://w.example/related"/><link rel="" href="https://w.example/story"/></entry></feed>`;
    const atom = parseFeed(Buffer.from(xml), { baseUrl: BASE, contentType: 'application/atom+xml' });
    expect(atom.items[0]!.url).toBe('https://w.example/story');
  });
});

describe('JSON Feed 1.1 items', () => {
  const feed = parseFixture('feed.json');
  it('map id, title, summary (content as fallback), url (resolved against the fetch URL), date', () => {
    expect(feed.format).toBe('json');
    expect(feed.minIntervalSeconds).toBeNull();
    expect(feed.items[0]).toEqual({
      guid: 'j-1',
      title: 'Nvidia & AMD rally',
      summary: 'Chip stocks rallied.',
      url: 'https://json-wire.example/posts/1?fbclid=abc',
      publishedAt: '2025-06-12T14:00:00.000Z',
    });
    expect(feed.items[1]).toEqual({
      guid: '2',
      title: null,
      summary: 'Short summary of post two',
      url: 'https://fetched.example/posts/2',
      publishedAt: '2025-06-12T11:00:00.000Z',
    });
    expect(feed.items[2]).toMatchObject({ title: null, url: 'https://elsewhere.example/story', publishedAt: null });
  });
});

describe('feeds in other charsets map to the same text', () => {
  it.each([
    ['latin1.xml', 'Zürich: Société Générale gains'],
    ['windows-1252.xml', '“Quoted” – €5 bonus'],
    ['gb2312.xml', '中国人民银行宣布降准'],
    ['utf16le-bom.xml', 'Ünïcödé 16'],
    ['utf8-declared-latin1.xml', 'Zürich – Nestlé “steady”'],
    ['cp1252-undeclared.xml', 'Café “crème” €3'],
  ])('%s', (name, title) => {
    const feed = parseFixture(name);
    expect(feed.items[0]!.title).toBe(title);
    expect(feed.items[0]!.publishedAt).toBe('2025-06-12T06:00:00.000Z');
  });
  it('the Content-Type charset is honoured', () => {
    const bytes = Buffer.from(
      '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><title>S\xe3o Paulo</title></item></channel></rss>',
      'latin1',
    );
    expect(
      parseFeed(bytes, { baseUrl: BASE, contentType: 'application/rss+xml; charset=ISO-8859-1' }).items[0]!.title,
    ).toBe('São Paulo');
  });
});

describe('what is not a feed is a parse or charset error', () => {
  it('malformed XML', () => {
    expect(parseError(() => parseFixture('malformed.xml')).kind).toBe('parse');
  });
  it('an HTML page, an empty body, garbage, a JSON object that is no feed', () => {
    expect(parseError(() => parseFixture('not-a-feed.html')).kind).toBe('parse');
    expect(parseError(() => parseFeed(new Uint8Array(), { baseUrl: BASE })).kind).toBe('parse');
    expect(parseError(() => parseFeed(Buffer.from('\u0000\u0001garbage'), { baseUrl: BASE })).kind).toBe('parse');
    expect(parseError(() => parseFeed(Buffer.from('{"hello":"world"}'), { baseUrl: BASE })).kind).toBe('parse');
  });
  it('an undecodable charset', () => {
    expect(parseError(() => parseFixture('unknown-charset.xml')).kind).toBe('charset');
  });
});

describe('the fixture server renders every format so that parseFeed reads it back', () => {
  const spec: FeedSpec = {
    format: 'rss',
    title: 'Round 1 < 2 & co',
    ttlMinutes: 5,
    syndication: { period: 'hourly', frequency: 4 },
    items: [
      {
        id: 'r-2',
        title: 'Second & \"last\" > first',
        summary: '<b>bold</b> move',
        link: 'https://rt.example/2',
        published: Date.UTC(2025, 5, 1, 12),
      },
      { id: null, title: 'First', link: '/1', published: null },
    ],
  };
  it.each(['rss', 'rdf', 'atom', 'json'] as const)('%s', (format) => {
    const { body } = renderFeed({ ...spec, format }, 'https://rt.example/feed');
    const feed = parseFeed(Buffer.from(body), { baseUrl: 'https://rt.example/feed' });
    expect(feed.format).toBe(format);
    expect(feed.title).toBe('Round 1 < 2 & co');
    expect(feed.items[0]).toMatchObject({
      title: 'Second & \"last\" > first',
      url: 'https://rt.example/2',
      summary: 'bold move',
      publishedAt: '2025-06-01T12:00:00.000Z',
    });
    expect(feed.items[1]).toMatchObject({ title: 'First', url: 'https://rt.example/1', publishedAt: null });
    // <ttl> 5 min = 300 s is RSS only; hourly/4 = 900 s is the larger floor wherever sy: is read.
    expect(feed.minIntervalSeconds).toBe(format === 'json' ? null : 900);
  });
});
