/**
 * A source's item to a SourcedItem (pure): `content` is the headline, else the summary; `published_at` the
 * item's date or null, never invented. An overlong feed headline is cut to fit (the feed is not ours to fix,
 * and losing the story is worse), whereas an operator's push line is refused (src/ops/push.ts).
 */
import { createHash } from 'node:crypto';
import { articleRules } from '../contract/index.js';
import { longerThan } from '../domain/text.js';
import { enrich } from '../enrich/index.js';
import { identify } from '../ingest/identity.js';
import { boundedId, EXTERNAL_ID_MAX_LENGTH } from '../ingest/pipeline.js';
import { mapInSlices, type SliceBudget } from '../runtime/slices.js';
import type { NewArticle, SourcedItem, UrgencySetting } from '../store/ports/index.js';
import { errorClass } from '../store/ports/errors.js';
import { canonicalUrl, type FeedItem } from './feed/index.js';

export { boundedId, EXTERNAL_ID_MAX_LENGTH };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function headlineOf(item: FeedItem): string | null {
  return item.title?.trim() || item.summary?.trim() || null;
}

function canonicalOf(item: FeedItem): string | null {
  return item.url === null ? null : canonicalUrl(item.url);
}

/** `text` cut to at most `max` characters at a word boundary, ending with "…" when cut. */
export function fitHeadline(text: string, max: number = articleRules.contentMaxLength): string {
  if (!longerThan(text, max)) return text;
  // max - 1 characters as the contract counts them (code points: a surrogate pair is never split), then "…".
  let cut = Array.from(text.slice(0, 2 * max))
    .slice(0, max - 1)
    .join('');
  const space = cut.lastIndexOf(' ');
  if (space >= cut.length / 2) cut = cut.slice(0, space);
  return `${cut.trimEnd()}…`;
}

/** The stable per-source id (exact dedup): guid, else canonical URL, else a hash of text and date; bounded. */
export function externalIdOf(item: FeedItem, canonical: string | null, content: string): string {
  const guid = item.guid?.trim();
  if (guid) return boundedId(guid);
  if (canonical !== null) return boundedId(canonical);
  return `sha256:${sha256(`${content}\n${item.publishedAt ?? ''}`)}`;
}

interface ItemFields {
  source: string;
  externalId: string;
  /** Plain text, within the contract's maxLength. */
  content: string;
  url: string | null;
  publishedAt: string | null;
  urgency: UrgencySetting;
  /** The canonical link of `url`, when the caller computed it already. */
  canonical?: string | null;
}

/** One item, enriched (src/enrich), with its identity (src/ingest/identity.ts). */
export function toSourcedItem(f: ItemFields): SourcedItem {
  const derived = enrich(f.content, { urgency: f.urgency });
  return identify(
    f.source,
    f.externalId,
    {
      content: f.content,
      urgency: derived.urgency,
      sentiment: derived.sentiment,
      tickers: derived.tickers,
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

/** The source a feed item came from, as its store item names it. */
export type FeedSource = { name: string; urgency: UrgencySetting };

/** One feed item as the store ingests it, or null without title or summary. */
function toSourcedFeedItem(source: FeedSource, item: FeedItem): SourcedItem | null {
  const text = headlineOf(item);
  if (text === null) return null;
  const content = fitHeadline(text);
  const canonical = canonicalOf(item);
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

/** A feed item whose preparation threw: its guid (else link, bounded) and the error's class. */
export interface FailedFeedItem {
  guid: string | null;
  errClass: string;
}

/** A prepared feed item: store item, textless item's id (recorded to count once), or `failed` (not its feed). */
export type PreparedFeedItem = SourcedItem | { textless: string } | { failed: FailedFeedItem };

/** Prepared items per chunk handed on, on the worker thread (prepare-worker.mjs) and on the event loop alike. */
export const PREPARED_CHUNK = 100;

function reportedId(item: FeedItem): string | null {
  try {
    const id = item.guid?.trim() || item.url?.trim();
    return id ? boundedId(id) : null;
  } catch {
    return null;
  }
}

/** `toSourcedFeedItem`, with the item's own failure as its outcome. */
export function prepareFeedItem(source: FeedSource, item: FeedItem): PreparedFeedItem {
  if (item.failed !== undefined) return { failed: { guid: reportedId(item), errClass: item.failed } };
  try {
    return toSourcedFeedItem(source, item) ?? { textless: externalIdOf(item, canonicalOf(item), '') };
  } catch (e) {
    return { failed: { guid: reportedId(item), errClass: errorClass(e) } };
  }
}

/** A feed's store items in feed order; textless items are left out (`items.length - result.length` of them). */
export function toSourcedItems(source: FeedSource, items: readonly FeedItem[]): SourcedItem[] {
  return items.map((item) => toSourcedFeedItem(source, item)).filter((s) => s !== null);
}

/** `toSourcedItems` in slices (src/runtime/slices.ts): a large feed's enrichment must not hold the event loop. */
export async function toSourcedItemsInSlices(
  source: FeedSource,
  items: readonly FeedItem[],
  budget: SliceBudget = {},
): Promise<SourcedItem[]> {
  const all = await mapInSlices(items, (item) => toSourcedFeedItem(source, item), budget);
  return all.filter((s) => s !== null);
}
