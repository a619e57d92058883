/**
 * An item's identity, what the store dedups by (pure): its canonical link (exact dedup across sources, and the
 * `url` shown), its repeat key (same source, headline and published time; undated, only within the
 * near-duplicate window) and its near-duplicate keys (the same story from another source): src/dedup.
 */
import { nearDuplicateKeys } from '../dedup/near.js';
import { repeatKey } from '../dedup/repeat.js';
import type { NewArticle, SourcedItem } from '../store/ports/index.js';
import { canonicalLink } from '../dedup/link.js';

/** The source scope of an operator's line that names no source (`fns articles ingest`). */
export const OPERATOR_SOURCE = 'operator';

/** The longest `url` an article shows (the contract's Article.url maxLength). */
export const URL_MAX_LENGTH = 2000;

/** A canonical link an article may show: null past URL_MAX_LENGTH. */
function shownLink(canonical: string | null): string | null {
  return canonical !== null && canonical.length <= URL_MAX_LENGTH ? canonical : null;
}

/** The canonical link an article shows and is deduplicated by, or null. */
export function articleLink(url: string | null | undefined): string | null {
  return url === null || url === undefined ? null : shownLink(canonicalLink(url));
}

/**
 * `article` of `source` with its identity. `shownSource`: the source the article shows (null for an operator
 * line without one); `canonical`: the canonical link of `article.url`, when the caller has it already.
 */
export function identify(
  source: string,
  externalId: string,
  article: NewArticle,
  shownSource: string | null = source,
  canonical?: string | null,
): SourcedItem {
  const url = canonical === undefined ? articleLink(article.url) : shownLink(canonical);
  return {
    source,
    externalId,
    canonicalUrl: url,
    article: { ...article, source: shownSource, url },
    nearKeys: nearDuplicateKeys(article.content),
    repeatKey: repeatKey(article.content, article.published_at),
  };
}
