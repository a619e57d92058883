/**
 * Identity of an item, the step between enrichment and the store: what makes two items the same story
 * before the store compares them with what it holds (src/store/ports/sources-plan.ts). Pure.
 *
 * - Its canonical link (src/dedup/link.ts): exact dedup by link across every source, and the `url` the
 *   article shows (null when there is no http(s) link, or when the canonical link is longer than the
 *   contract's URL_MAX_LENGTH).
 * - Its repeat key (src/dedup/repeat.ts): one source repeating one headline with the same published
 *   time is the same item; undated, only within the near-duplicate window.
 * - Its near-duplicate keys (src/dedup/near.ts), for the same story from another source.
 */
import { nearDuplicateKeys } from '../dedup/near.js';
import { repeatKey } from '../dedup/repeat.js';
import type { NewArticle, SourcedItem } from '../store/ports/index.js';
import { canonicalLink } from '../dedup/link.js';

/** The source scope of an operator's line that names no source (`fns articles ingest`). */
export const OPERATOR_SOURCE = 'operator';

/** The longest `url` an article shows (the contract's Article.url maxLength). */
export const URL_MAX_LENGTH = 2000;

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
  const url =
    canonical === undefined
      ? articleLink(article.url)
      : canonical !== null && canonical.length <= URL_MAX_LENGTH
        ? canonical
        : null;
  return {
    source,
    externalId,
    canonicalUrl: url,
    article: { ...article, source: shownSource, url },
    nearKeys: nearDuplicateKeys(article.content),
    repeatKey: repeatKey(article.content, article.published_at),
  };
}
