/**
 * Identity of an item, the step between enrichment and the store: what makes two items the same story
 * before the store compares them with what it holds (src/store/sources-plan.ts). Pure.
 *
 * - Its canonical link (src/ingest/link.ts): exact dedup by link across every source, and the `url` the
 *   article shows (null when there is no http(s) link, or when the canonical link is longer than the
 *   contract's URL_MAX_LENGTH).
 * - Its repeat key: the same source repeating the same headline (normalised by `repeatHeadline`) with
 *   the same published time under another id or link is the same item. An item without a published
 *   time has an undated key, which the store matches only within the near-duplicate window: a wire's
 *   recurring headline ("Wall Street opens higher") on another day is a new story.
 * - Its near-duplicate keys (src/dedup/near.ts), for the same story from another source.
 */
import { createHash } from 'node:crypto';
import { nearDuplicateKeys } from '../dedup/near.js';
import type { NewArticle, SourcedItem } from '../store/ports.js';
import { canonicalLink } from './link.js';

/** The source scope of an operator's line that names no source (`fns articles ingest`). */
export const OPERATOR_SOURCE = 'operator';

/** The longest `url` an article shows (the contract's Article.url maxLength). */
export const URL_MAX_LENGTH = 2000;

/** Prefixes of repeat keys (stored beside the items' own ids, per source): dated and undated. */
export const REPEAT_KEY_DATED = 'headline:';
export const REPEAT_KEY_UNDATED = 'headline-undated:';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * A headline as repeats are compared: compatibility forms folded (NFKC), lower case, punctuation and
 * symbols that are not inside a number turned into spaces, runs of spaces collapsed. Exact otherwise:
 * a different word is a different headline (an update of a story keeps its id or link instead).
 */
export function repeatHeadline(content: string): string {
  return content
    .normalize('NFKC')
    .toLowerCase()
    .replace(/(?<!\d)[\p{P}\p{S}]+|[\p{P}\p{S}]+(?!\d)/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The repeat key of an item of one source: its headline and published time (as an instant), or undated. */
export function repeatKey(content: string, publishedAt: string | null): string {
  const headline = repeatHeadline(content);
  if (publishedAt === null) return `${REPEAT_KEY_UNDATED}${sha256(headline)}`;
  const ms = Date.parse(publishedAt);
  const when = Number.isNaN(ms) ? publishedAt : new Date(ms).toISOString();
  return `${REPEAT_KEY_DATED}${sha256(`${headline}\n${when}`)}`;
}

export const isUndatedRepeatKey = (key: string) => key.startsWith(REPEAT_KEY_UNDATED);

/** The canonical link an article shows and is deduplicated by, or null. */
export function articleLink(url: string | null | undefined): string | null {
  if (url === null || url === undefined) return null;
  const c = canonicalLink(url);
  return c !== null && c.length <= URL_MAX_LENGTH ? c : null;
}

/**
 * An enriched article of `source` with its identity: canonical link (also its `url`), repeat key and
 * near keys. `shownSource` is the `source` the article shows (null for an operator line without one);
 * `canonical`, the canonical link of `article.url` when the caller has it already (computed otherwise).
 */
export function identify(
  source: string,
  externalId: string,
  article: NewArticle,
  shownSource: string | null = source,
  canonical?: string | null,
): SourcedItem {
  const url = canonical === undefined ? articleLink(article.url) : canonical !== null && canonical.length <= URL_MAX_LENGTH ? canonical : null;
  return {
    source,
    externalId,
    canonicalUrl: url,
    article: { ...article, source: shownSource, url },
    nearKeys: nearDuplicateKeys(article.content),
    repeatKey: repeatKey(article.content, article.published_at),
  };
}
