import { detectJsonFeed, parseFeed as parseAnyFeed } from 'feedsmith';
import type { AtomFeed, RdfFeed, RssFeed } from 'feedsmith';
import { errorClass } from '../../store/ports/errors.js';
import { decodeFeedBytes } from './charset.js';
import { feedDate } from './dates.js';
import { FeedError } from './errors.js';
import { feedLevelTexts, readDecimal } from './numbers.js';
import { toPlainText } from './text.js';
import { resolveBase, resolveHttpUrl } from './url.js';

export interface FeedItem {
  /** guid / id / link-as-id as given by the feed, trimmed; null when the item has none. */
  guid: string | null;
  /** Plain text (HTML stripped, entities decoded, whitespace collapsed); null when absent/empty. */
  title: string | null;
  summary: string | null;
  /** Absolute URL (resolved against the item/feed base), or null. */
  url: string | null;
  /** RFC 3339 UTC with milliseconds, or null when absent or unreadable; never invented. */
  publishedAt: string | null;
  /** When reading the item threw: the error's class (reported failed, never stored). */
  failed?: string;
}

/** One item read by `map`; a throw is that item's failure (with its guid if `guid` can read it), not the feed's. */
export function mapItemSafely(map: () => FeedItem, guid: () => string | null): FeedItem {
  try {
    return map();
  } catch (e) {
    let id: string | null = null;
    try {
      id = guid();
    } catch {
      // no guid either
    }
    return { guid: id, title: null, summary: null, url: null, publishedAt: null, failed: errorClass(e) };
  }
}

export interface ParsedFeed {
  format: 'rss' | 'rdf' | 'atom' | 'json';
  title: string | null;
  items: FeedItem[];
  /** The feed's own poll floor (RSS <ttl>, sy:updatePeriod), whole seconds in [1, FEED_FLOOR_MAX_SECONDS], or null. */
  minIntervalSeconds: number | null;
}

/** The longest floor a feed may set on its own polling (its ttl or sy:updatePeriod), seconds: one day. */
export const FEED_FLOOR_MAX_SECONDS = 86_400;

/** RSS `<ttl>` is in minutes; a larger one reads as a day. */
const TTL_MAX_MINUTES = FEED_FLOOR_MAX_SECONDS / 60;

const FREQUENCY_MAX = 1_000_000;

// A Map: the key is the feed's text.
const PERIOD_SECONDS = new Map<string, number>([
  ['hourly', 3600],
  ['daily', 86_400],
  ['weekly', 604_800],
  ['monthly', 2_592_000],
  ['yearly', 31_536_000],
]);

/** Feed-level numbers read from the document's text (./numbers.ts). */
const NUMBER_ELEMENTS: ReadonlySet<string> = new Set(['ttl', 'updatefrequency']);

/** A string field: only a string is one (a number, array or object in its place is absent, never converted). */
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function firstStr(v: unknown): string | undefined {
  return Array.isArray(v) ? str(v[0]) : undefined;
}

function strs(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** sy:updatePeriod / updateFrequency in seconds, or null; the frequency from its raw text (the parser reads `0x10`). */
function syndicationSeconds(
  sy: { updatePeriod?: unknown; updateFrequency?: unknown } | undefined,
  rawFrequency: string | undefined,
): number | null {
  if (!sy || (sy.updatePeriod === undefined && sy.updateFrequency === undefined)) return null;
  const periodText = sy.updatePeriod === undefined ? 'daily' : str(sy.updatePeriod);
  const period = periodText === undefined ? undefined : PERIOD_SECONDS.get(periodText.trim().toLowerCase());
  const frequency = rawFrequency === undefined ? 1 : readDecimal(rawFrequency, 1, FREQUENCY_MAX);
  if (period === undefined || frequency === null) return null;
  return Math.min(FEED_FLOOR_MAX_SECONDS, Math.max(1, Math.round(period / frequency)));
}

function ttlSeconds(rawTtl: string | undefined): number | null {
  const minutes = readDecimal(rawTtl, 1, TTL_MAX_MINUTES);
  return minutes === null ? null : minutes * 60;
}

function trimmed(s: string | undefined): string | null {
  const t = s?.trim();
  return t ? t : null;
}

function firstDate(...raws: (string | undefined)[]): string | null {
  for (const raw of raws) {
    const d = feedDate(raw);
    if (d !== null) return d;
  }
  return null;
}

/** Where relative RSS/RDF item links resolve: the channel's xml:base, else its <link>, else the fetch URL. */
function channelBase(feed: RssFeed.Feed<string> | RdfFeed.Feed<string>, baseUrl: string): string | null {
  return resolveBase(str(feed.xml?.base), resolveBase(str(feed.link), baseUrl));
}

/** Title and summary of an RSS or RDF item; Dublin Core's when the item's own element is absent. */
function rssTexts(item: RssFeed.Item<string> | RdfFeed.Item<string>): Pick<FeedItem, 'title' | 'summary'> {
  return {
    title: toPlainText(str(item.title) ?? firstStr(item.dc?.titles)),
    summary: toPlainText(str(item.description) ?? str(item.content?.encoded) ?? firstStr(item.dc?.descriptions)),
  };
}

function mapRss(feed: RssFeed.Feed<string>, baseUrl: string, numbers: Map<string, string>): ParsedFeed {
  const feedBase = channelBase(feed, baseUrl);
  const items = (feed.items ?? []).map((item) =>
    mapItemSafely(
      () => {
        const base = resolveBase(str(item.xml?.base), feedBase);
        const guid = trimmed(str(item.guid?.value));
        const permalink = item.guid?.isPermaLink !== false && guid !== null ? guid : null;
        const alternate = (item.atom?.links ?? []).find(isAlternate);
        return {
          guid,
          ...rssTexts(item),
          url:
            resolveHttpUrl(str(item.link) ?? str(alternate?.href), base) ??
            // A guid is a permalink only when it really is an absolute URL (many feeds omit isPermaLink="false").
            (permalink !== null ? resolveHttpUrl(permalink, null) : null),
          publishedAt: firstDate(
            str(item.pubDate),
            ...strs(item.dc?.dates),
            ...strs(item.dcterms?.issued),
            ...strs(item.dcterms?.created),
            str(item.atom?.published),
            str(item.atom?.updated),
          ),
        };
      },
      () => trimmed(str(item.guid?.value)),
    ),
  );
  // Both within [1, FEED_FLOOR_MAX_SECONDS]: the longer one is the floor.
  const floors = [ttlSeconds(numbers.get('ttl')), syndicationSeconds(feed.sy, numbers.get('updatefrequency'))];
  const present = floors.filter((f) => f !== null);
  return {
    format: 'rss',
    title: toPlainText(str(feed.title)),
    items,
    minIntervalSeconds: present.length > 0 ? Math.max(...present) : null,
  };
}

function mapRdf(feed: RdfFeed.Feed<string>, baseUrl: string, numbers: Map<string, string>): ParsedFeed {
  const feedBase = channelBase(feed, baseUrl);
  const items = (feed.items ?? []).map((item) =>
    mapItemSafely(
      () => {
        const base = resolveBase(str(item.xml?.base), feedBase);
        return {
          guid: trimmed(str(item.rdf?.about)),
          ...rssTexts(item),
          url: resolveHttpUrl(str(item.link) ?? str(item.rdf?.about), base),
          publishedAt: firstDate(
            ...strs(item.dc?.dates),
            ...strs(item.dcterms?.issued),
            ...strs(item.dcterms?.created),
          ),
        };
      },
      () => trimmed(str(item.rdf?.about)),
    ),
  );
  return {
    format: 'rdf',
    title: toPlainText(str(feed.title)),
    items,
    minIntervalSeconds: syndicationSeconds(feed.sy, numbers.get('updatefrequency')),
  };
}

/** A link without a relation (absent or empty) is the alternate one (RFC 4287 §4.2.7.2), in Atom and in RSS. */
const isAlternate = (l: { rel?: string }): boolean => !l.rel || l.rel === 'alternate';

function atomLink(links: AtomFeed.Link<string>[] | undefined): string | undefined {
  if (!links?.length) return undefined;
  return str(
    (links.find(isAlternate) ?? links.find((l) => l.rel !== 'self' && l.rel !== 'enclosure') ?? links[0])?.href,
  );
}

function mapAtom(feed: AtomFeed.Feed<string>, baseUrl: string, numbers: Map<string, string>): ParsedFeed {
  // Atom resolves against xml:base (RFC 4287 §2, RFC 3986), else the document's own URL.
  const feedBase = resolveBase(str(feed.xml?.base), baseUrl);
  const items = (feed.entries ?? []).map((entry) =>
    mapItemSafely(
      () => {
        const base = resolveBase(str(entry.xml?.base), feedBase);
        return {
          guid: trimmed(str(entry.id)),
          title: toPlainText(str(entry.title?.value)),
          summary: toPlainText(str(entry.summary?.value) ?? str(entry.content?.value)),
          url: resolveHttpUrl(atomLink(entry.links), base),
          publishedAt: firstDate(str(entry.published), str(entry.updated), ...strs(entry.dc?.dates)),
        };
      },
      () => trimmed(str(entry.id)),
    ),
  );
  return {
    format: 'atom',
    title: toPlainText(str(feed.title?.value)),
    items,
    minIntervalSeconds: syndicationSeconds(feed.sy, numbers.get('updatefrequency')),
  };
}

/** An own property only (`__proto__` or `constructor` never reads the prototype). */
function own(o: object, key: string): unknown {
  return Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined;
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON Feed item's id: its text, or a finite number's decimal text; the same for a stored and a failed item. */
function jsonId(item: object): string | null {
  const id = own(item, 'id');
  return typeof id === 'number' && Number.isFinite(id) ? String(id) : trimmed(str(id));
}

/** JSON Feed 1.x by the spec's types, not the library's coercions (`title: 42`); a numeric `id` is its decimal text. */
function mapJson(doc: object, baseUrl: string): ParsedFeed {
  const list = own(doc, 'items');
  const items = (Array.isArray(list) ? list : []).filter(isObject).map((item) =>
    mapItemSafely(
      () => {
        const text = (key: string): string | undefined => str(own(item, key));
        return {
          guid: jsonId(item),
          title: toPlainText(text('title')),
          summary: toPlainText(text('summary') ?? text('content_text') ?? text('content_html')),
          url: resolveHttpUrl(text('url') ?? text('external_url'), baseUrl),
          publishedAt: firstDate(text('date_published'), text('date_modified')),
        };
      },
      () => jsonId(item),
    ),
  );
  return { format: 'json', title: toPlainText(str(own(doc, 'title'))), items, minIntervalSeconds: null };
}

/**
 * An `id` written as an integer past 2^53 kept as its digits: as a double two items' ids (snowflake ids) are one
 * number, and the second item would be taken for the first. A reviver walks the document recursively (slower, and a
 * deeply nested value overflows the stack), so it is used only for a document that has such an id.
 */
function idDigits(key: string, value: unknown, context?: { source?: string }): unknown {
  return key === 'id' &&
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    /^-?\d+$/.test(context?.source ?? '')
    ? context!.source
    : value;
}

/** The document as a JSON Feed when it is one (the parser library's test), else null. */
function asJsonFeed(text: string): object | null {
  const first = /\S/.exec(text);
  if (first?.[0] !== '{') return null;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return null;
  }
  const items = isObject(doc) ? own(doc, 'items') : undefined;
  const roundedId = (item: unknown) => {
    const id = isObject(item) ? own(item, 'id') : undefined;
    return typeof id === 'number' && !Number.isSafeInteger(id);
  };
  if (Array.isArray(items) && items.some(roundedId)) {
    try {
      doc = JSON.parse(text, idDigits as Parameters<typeof JSON.parse>[1]);
    } catch {
      // Too deep for a reviver: the ids as the plain reading gives them.
    }
  }
  return isObject(doc) && detectJsonFeed(doc) ? doc : null;
}

/** A feed's bytes to plain items (`baseUrl`: the final URL); FeedError 'charset' if undecodable, 'parse' if no feed. */
export function parseFeed(body: Uint8Array, opts: { contentType?: string | null; baseUrl: string }): ParsedFeed {
  const { text } = decodeFeedBytes(body, opts.contentType);
  const json = asJsonFeed(text);
  if (json !== null) return mapJson(json, opts.baseUrl);
  let parsed: ReturnType<typeof parseAnyFeed<string>>;
  try {
    parsed = parseAnyFeed<string>(text);
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    const message = err instanceof Error ? err.message : String(err);
    throw new FeedError('parse', `${message}${cause}`.slice(0, 300), { cause: err });
  }
  // JSON Feeds are read above, never by the library's coerced reading.
  if (parsed.format === 'json') throw new FeedError('parse', 'a JSON Feed that is not one JSON object');
  const numbers = feedLevelTexts(text, NUMBER_ELEMENTS);
  switch (parsed.format) {
    case 'rss':
      return mapRss(parsed.feed, opts.baseUrl, numbers);
    case 'rdf':
      return mapRdf(parsed.feed, opts.baseUrl, numbers);
    case 'atom':
      return mapAtom(parsed.feed, opts.baseUrl, numbers);
  }
}
