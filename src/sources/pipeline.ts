/**
 * From a source's item to what the store ingests (SourcedItem): the mapping, enrichment
 * (tickers, sentiment, urgency), near-duplicate keys, the canonical URL and the stable external id.
 * Pure and synchronous; `store.ingestItems` then deduplicates and stores, in one transaction.
 *
 * Mapping: `content` = the headline (plain text; the summary when there is no title); `published_at` =
 * the item's date, or null (never invented); `url`; `source` = the source's name.
 *
 * External id (exact dedup per source): the feed's guid/id; else the canonical URL; else a hash of the
 * text and the date. Ids longer than EXTERNAL_ID_MAX_LENGTH are stored as their SHA-256, so a record
 * stays small and indexable whatever the feed puts in its guid.
 *
 * Length: a feed headline longer than the contract's content maxLength (in practice a whole article in
 * a title-less item's summary) is cut at a word boundary, with "…", to fit: the feed is not ours to fix,
 * and losing the story is worse than a shortened headline whose url leads to the full text. A push
 * line is an operator's own input and is refused instead (src/ops/push.ts), as `fns articles ingest` does.
 */
import { createHash } from 'node:crypto';
import { articleRules, type ArticleSentiment, type TickerSentiment } from '../contract/index.js';
import { enrich } from '../enrich/index.js';
import { identify } from '../ingest/identity.js';
import { boundedId, EXTERNAL_ID_MAX_LENGTH } from '../ingest/pipeline.js';
import { eachInSlices, type SliceBudget } from '../runtime/slices.js';
import type { NewArticle, SourcedItem, UrgencySetting } from '../store/ports/index.js';
import { errorClass } from '../store/ports/errors.js';
import { canonicalUrl, type FeedItem } from './feed/index.js';

export { boundedId, EXTERNAL_ID_MAX_LENGTH };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The headline of a feed item: its title, else its summary; null when it has no text. */
function headlineOf(item: Pick<FeedItem, 'title' | 'summary'>): string | null {
  const t = item.title?.trim();
  if (t) return t;
  const s = item.summary?.trim();
  return s ? s : null;
}

/** `text` cut to at most `max` characters at a word boundary, ending with "…" when cut. */
export function fitHeadline(text: string, max: number = articleRules.contentMaxLength): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  // Never split a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const space = cut.lastIndexOf(' ');
  if (space >= max / 2) cut = cut.slice(0, space);
  return `${cut.trimEnd()}…`;
}

/** The stable per-source id of a feed item: guid, else canonical URL, else a hash of text and date. */
export function externalIdOf(item: FeedItem, canonical: string | null, content: string): string {
  const guid = item.guid?.trim();
  if (guid) return boundedId(guid);
  if (canonical !== null) return boundedId(canonical);
  return `sha256:${sha256(`${content}\n${item.publishedAt ?? ''}`)}`;
}

export interface ItemFields {
  source: string;
  externalId: string;
  /** Plain text, within the contract's maxLength. */
  content: string;
  url: string | null;
  publishedAt: string | null;
  urgency: UrgencySetting;
  /** The canonical link of `url`, when the caller computed it already. */
  canonical?: string | null;
  /** Given by the source (push): used as given instead of derived. */
  tickers?: TickerSentiment[];
  sentiment?: ArticleSentiment;
}

/** One item, enriched where the source said nothing (enrich), with its identity (src/ingest/identity.ts). */
export function toSourcedItem(f: ItemFields): SourcedItem {
  const derived = enrich(f.content, { urgency: f.urgency });
  return identify(
    f.source,
    f.externalId,
    {
      content: f.content,
      urgency: derived.urgency,
      sentiment: f.sentiment !== undefined ? f.sentiment : derived.sentiment,
      tickers: f.tickers ?? derived.tickers,
      published_at: f.publishedAt,
      source: f.source,
      url: f.url,
    },
    f.source,
    f.canonical,
  );
}

export { SOURCE_NAME } from '../domain/source-name.js';

/** An article already complete (a push line checked by src/ingest/parse.ts) as the store ingests it. */
export function sourcedArticle(source: string, externalId: string, article: NewArticle): SourcedItem {
  return identify(source, externalId, article);
}

/** One feed item as the store ingests it, or null when it has no text (neither title nor summary). */
function toSourcedFeedItem(source: { name: string; urgency: UrgencySetting }, item: FeedItem): SourcedItem | null {
  const text = headlineOf(item);
  if (text === null) return null;
  const content = fitHeadline(text);
  const canonical = item.url === null ? null : canonicalUrl(item.url);
  return toSourcedItem({
    source: source.name,
    externalId: externalIdOf(item, canonical, content),
    content,
    url: item.url,
    canonical,
    publishedAt: item.publishedAt,
    urgency: source.urgency,
  });
}

/** A feed item whose mapping, enrichment or identity failed with an unexpected error: its guid (else its link; bounded as an external id) and the error's class. */
export interface FailedFeedItem {
  guid: string | null;
  errClass: string;
}

/**
 * One feed item prepared for the poll: the item the store ingests; or, for an item with no text, its
 * external id (`textless`: recorded so it is counted once, `SourceStore.recordTextlessItems`); or, when
 * its preparation threw, what may be reported of it (`failed`), so one item never fails its feed.
 */
export type PreparedFeedItem = SourcedItem | { textless: string } | { failed: FailedFeedItem };

/** The guid of a feed item as it may be reported (else its link), bounded as an external id; null when it has neither. */
function reportedId(item: FeedItem): string | null {
  try {
    const id = item.guid?.trim() || item.url?.trim();
    return id ? boundedId(id) : null;
  } catch {
    return null;
  }
}

/** `toSourcedFeedItem`, with the item's own failure as its outcome (see PreparedFeedItem). */
export function prepareFeedItem(source: { name: string; urgency: UrgencySetting }, item: FeedItem): PreparedFeedItem {
  if (item.failed !== undefined) return { failed: { guid: reportedId(item), errClass: item.failed } };
  try {
    const s = toSourcedFeedItem(source, item);
    if (s !== null) return s;
    return { textless: externalIdOf(item, item.url === null ? null : canonicalUrl(item.url), '') };
  } catch (e) {
    return { failed: { guid: reportedId(item), errClass: errorClass(e) } };
  }
}

/**
 * A polled feed's items as the store ingests them, in feed order. Items with no text (neither title nor
 * summary) are left out: the caller counts them as `items.length - result.length`.
 */
export function toSourcedItems(
  source: { name: string; urgency: UrgencySetting },
  items: readonly FeedItem[],
): SourcedItem[] {
  const out: SourcedItem[] = [];
  for (const item of items) {
    const s = toSourcedFeedItem(source, item);
    if (s !== null) out.push(s);
  }
  return out;
}

/**
 * `toSourcedItems` in slices of a few ms (src/runtime/slices.ts), a turn of the event loop between them:
 * enrichment and near-duplicate keys cost about 50-70 us an item, so a feed of 5,000 items is a third of
 * a second of work that must not hold the loop at once. Same result, same order.
 */
export async function toSourcedItemsInSlices(
  source: { name: string; urgency: UrgencySetting },
  items: readonly FeedItem[],
  budget: SliceBudget = {},
): Promise<SourcedItem[]> {
  const out: SourcedItem[] = [];
  await eachInSlices(
    items,
    (item) => {
      const s = toSourcedFeedItem(source, item);
      if (s !== null) out.push(s);
    },
    budget,
  );
  return out;
}
