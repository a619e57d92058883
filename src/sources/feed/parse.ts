import { parseFeed as parseAnyFeed } from 'feedsmith';
import type { AtomFeed, JsonFeed, RdfFeed, RssFeed } from 'feedsmith';
import { decodeFeedBytes } from './charset.js';
import { feedDate } from './dates.js';
import { FeedError } from './errors.js';
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
  /** RFC 3339 UTC with milliseconds (e.g. 2026-11-22T05:55:44.000Z) or null when absent/unreadable; never invented. */
  publishedAt: string | null;
}

export interface ParsedFeed {
  format: 'rss' | 'rdf' | 'atom' | 'json';
  title: string | null;
  items: FeedItem[];
  /** Floor on the poll interval from the feed itself (RSS <ttl>, sy:updatePeriod/updateFrequency), seconds, or null. */
  minIntervalSeconds: number | null;
}

const PERIOD_SECONDS: Record<string, number> = {
  hourly: 3600, daily: 86_400, weekly: 604_800, monthly: 2_592_000, yearly: 31_536_000,
};

/** sy:updatePeriod / sy:updateFrequency (RSS 1.0 Syndication module; frequency defaults to 1) in seconds. */
function syndicationSeconds(sy: { updatePeriod?: string; updateFrequency?: number } | undefined): number | null {
  if (!sy || (sy.updatePeriod === undefined && sy.updateFrequency === undefined)) return null;
  const period = PERIOD_SECONDS[(sy.updatePeriod ?? 'daily').trim().toLowerCase()];
  if (period === undefined) return null;
  const frequency = sy.updateFrequency ?? 1;
  if (!Number.isFinite(frequency) || frequency <= 0) return null;
  return Math.max(1, Math.round(period / frequency));
}

function floorOf(...candidates: (number | null)[]): number | null {
  const present = candidates.filter((c): c is number => c !== null && Number.isFinite(c) && c > 0);
  return present.length ? Math.max(...present) : null;
}

function trimmed(s: string | number | null | undefined): string | null {
  if (s == null) return null;
  const t = String(s).trim();
  return t === '' ? null : t;
}

function firstDate(...raws: (string | null | undefined)[]): string | null {
  for (const raw of raws) {
    const d = feedDate(raw);
    if (d !== null) return d;
  }
  return null;
}

function mapRss(feed: RssFeed.Feed<string>, baseUrl: string): ParsedFeed {
  // Relative item links: the item's xml:base, the channel's xml:base, the channel <link>, the fetch URL.
  const channelBase = resolveBase(feed.xml?.base, resolveBase(feed.link, baseUrl));
  const items = (feed.items ?? []).map((item): FeedItem => {
    const base = resolveBase(item.xml?.base, channelBase);
    const guid = trimmed(item.guid?.value);
    const permalink = item.guid?.isPermaLink !== false && guid !== null ? guid : null;
    return {
      guid,
      title: toPlainText(item.title ?? item.dc?.titles?.[0]),
      summary: toPlainText(item.description ?? item.content?.encoded ?? item.dc?.descriptions?.[0]),
      url: resolveHttpUrl(item.link ?? item.atom?.links?.find((l) => !l.rel || l.rel === 'alternate')?.href, base) ??
        // A guid is a permalink only when it really is an absolute URL (many feeds omit isPermaLink="false").
        (permalink !== null ? resolveHttpUrl(permalink, null) : null),
      publishedAt: firstDate(item.pubDate, ...(item.dc?.dates ?? []), ...(item.dcterms?.issued ?? []), ...(item.dcterms?.created ?? []), item.atom?.published, item.atom?.updated),
    };
  });
  const ttlSeconds = feed.ttl !== undefined && Number.isFinite(feed.ttl) && feed.ttl > 0 ? Math.round(feed.ttl * 60) : null;
  return { format: 'rss', title: toPlainText(feed.title), items, minIntervalSeconds: floorOf(ttlSeconds, syndicationSeconds(feed.sy)) };
}

function mapRdf(feed: RdfFeed.Feed<string>, baseUrl: string): ParsedFeed {
  const channelBase = resolveBase(feed.xml?.base, resolveBase(feed.link, baseUrl));
  const items = (feed.items ?? []).map((item): FeedItem => {
    const base = resolveBase(item.xml?.base, channelBase);
    return {
      guid: trimmed(item.rdf?.about),
      title: toPlainText(item.title ?? item.dc?.titles?.[0]),
      summary: toPlainText(item.description ?? item.content?.encoded ?? item.dc?.descriptions?.[0]),
      url: resolveHttpUrl(item.link ?? item.rdf?.about, base),
      publishedAt: firstDate(...(item.dc?.dates ?? []), ...(item.dcterms?.issued ?? []), ...(item.dcterms?.created ?? [])),
    };
  });
  return { format: 'rdf', title: toPlainText(feed.title), items, minIntervalSeconds: syndicationSeconds(feed.sy) };
}

function atomLink(links: AtomFeed.Link<string>[] | undefined): string | undefined {
  if (!links?.length) return undefined;
  return (links.find((l) => (l.rel ?? 'alternate') === 'alternate') ?? links.find((l) => l.rel !== 'self' && l.rel !== 'enclosure') ?? links[0])?.href;
}

function mapAtom(feed: AtomFeed.Feed<string>, baseUrl: string): ParsedFeed {
  // Atom resolves against xml:base (RFC 4287 §2, RFC 3986), else the document's own URL.
  const feedBase = resolveBase(feed.xml?.base, baseUrl);
  const items = (feed.entries ?? []).map((entry): FeedItem => {
    const base = resolveBase(entry.xml?.base, feedBase);
    return {
      guid: trimmed(entry.id),
      title: toPlainText(entry.title?.value),
      summary: toPlainText(entry.summary?.value ?? entry.content?.value),
      url: resolveHttpUrl(atomLink(entry.links), base),
      publishedAt: firstDate(entry.published, entry.updated, ...(entry.dc?.dates ?? [])),
    };
  });
  return { format: 'atom', title: toPlainText(feed.title?.value), items, minIntervalSeconds: syndicationSeconds(feed.sy) };
}

function mapJson(feed: JsonFeed.Feed<string>, baseUrl: string): ParsedFeed {
  const items = (feed.items ?? []).map((item): FeedItem => ({
    guid: trimmed(item.id as string | number | undefined),
    title: toPlainText(item.title),
    summary: toPlainText(item.summary ?? item.content_text ?? item.content_html),
    url: resolveHttpUrl(item.url ?? item.external_url, baseUrl),
    publishedAt: firstDate(item.date_published, item.date_modified),
  }));
  return { format: 'json', title: toPlainText(feed.title), items, minIntervalSeconds: null };
}

/**
 * Bytes of an RSS 0.9x/2.0, RSS 1.0 (RDF), Atom 1.0 or JSON Feed 1.x document to plain items.
 * `baseUrl` is the URL the bytes were fetched from (the final one after redirects).
 * Throws FeedError('charset') when the bytes cannot be decoded, FeedError('parse') when they are not a feed.
 */
export function parseFeed(body: Uint8Array, opts: { contentType?: string | null; baseUrl: string }): ParsedFeed {
  const { text } = decodeFeedBytes(body, opts.contentType);
  let parsed: ReturnType<typeof parseAnyFeed<string>>;
  try {
    parsed = parseAnyFeed<string>(text);
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    const message = err instanceof Error ? err.message : String(err);
    throw new FeedError('parse', `${message}${cause}`.slice(0, 300), { cause: err });
  }
  switch (parsed.format) {
    case 'rss':
      return mapRss(parsed.feed, opts.baseUrl);
    case 'rdf':
      return mapRdf(parsed.feed, opts.baseUrl);
    case 'atom':
      return mapAtom(parsed.feed, opts.baseUrl);
    case 'json':
      return mapJson(parsed.feed, opts.baseUrl);
  }
}
