/**
 * The dedup decision of `SourceStore.ingestItems`, shared by both engines: a pure function over what the
 * adapter read inside its write transaction (the seen records of the batch's items and URLs, the near-key
 * candidates of the window). The adapter then inserts the items to store, resolves the references and
 * writes the records this plan lists, in the same transaction.
 *
 * Order of the rules, per item: same (source, externalId) -> `same-item`; same canonical URL ->
 * `same-url`; a candidate article sharing a near key whose content the rule calls a near-duplicate and
 * which this source has not carried yet -> `near-duplicate` (the source becomes a carrier). Items of
 * one batch are checked against the earlier items of that batch too.
 */
import type { NearDuplicateRule, SourcedItem } from './ports.js';

/** An article: stored already (`id`), or the `pending`-th item to insert in this batch. */
export type ArticleRef = { id: string } | { pending: number };

export interface SeenLookup {
  /** `seenKey(source, externalId)` -> article id. */
  bySourceItem: Map<string, string>;
  /** Canonical URL -> article id. */
  byUrl: Map<string, string>;
  /**
   * Item index -> stored articles of the window sharing a near key with it, not carried by its source,
   * most shared keys first, at most NEAR_CANDIDATES_MAX (only for items that are not exact duplicates).
   */
  nearCandidates: Map<number, string[]>;
  /** Content and carrier sources of every article in nearCandidates. */
  candidates: Map<string, { content: string; sources: Set<string> }>;
}

/** Candidates per item given to the precise near-duplicate decision: a true duplicate shares most keys. */
export const NEAR_CANDIDATES_MAX = 20;
/**
 * Per near key, only the most recent articles having it are counted: a key common to many headlines
 * (a template, a generic phrase) costs a bounded amount of work per item instead of the whole window.
 */
export const NEAR_KEY_FANOUT = 50;

/** Candidate ids ranked by shared keys (most first, then the newest id), from per-key hit lists. */
export function rankCandidates(hitsPerKey: Iterable<readonly string[]>): string[] {
  const counts = new Map<string, number>();
  for (const hits of hitsPerKey) for (const id of new Set(hits)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0)).map(([id]) => id);
}

/** The items whose near candidates matter: those that are not exact duplicates of stored items. */
export function needsNearLookup(item: SourcedItem, found: Pick<SeenLookup, 'bySourceItem' | 'byUrl'>): boolean {
  if (item.nearKeys.length === 0 || found.bySourceItem.has(seenKey(item.source, item.externalId))) return false;
  return item.canonicalUrl === null || !found.byUrl.has(item.canonicalUrl);
}

export type PlannedOutcome =
  | { status: 'stored'; pending: number }
  | { status: 'duplicate'; reason: 'same-item' | 'same-url' | 'near-duplicate'; ref: ArticleRef };

export interface IngestPlan {
  outcomes: PlannedOutcome[];
  /** Indexes into `items` of the articles to insert, in order (pending n = store[n]). */
  store: number[];
  /** Exact-dedup records to write (insert, or refresh the time of an existing one). */
  seen: { source: string; externalId: string; canonicalUrl: string | null; ref: ArticleRef }[];
  /** Carrier records to add: the first source of each stored article, and the sources of duplicates. */
  carriers: { ref: ArticleRef; source: string; url: string | null }[];
}

export const seenKey = (source: string, externalId: string) => `${source}\n${externalId}`;

export function planIngest(items: readonly SourcedItem[], found: SeenLookup, rule: NearDuplicateRule): IngestPlan {
  const plan: IngestPlan = { outcomes: [], store: [], seen: [], carriers: [] };
  // What this batch adds, visible to its later items.
  const batchItems = new Map<string, ArticleRef>();
  const batchUrls = new Map<string, ArticleRef>();
  const batchKeys = new Map<string, number[]>();
  // Carrier sources known per article, including those this plan adds.
  const carriersOf = new Map<string, Set<string>>();
  const carrierKey = (ref: ArticleRef) => ('id' in ref ? `i:${ref.id}` : `p:${ref.pending}`);
  const sourcesOf = (ref: ArticleRef): Set<string> => {
    const k = carrierKey(ref);
    let s = carriersOf.get(k);
    if (!s) {
      s = new Set('id' in ref ? found.candidates.get(ref.id)?.sources ?? [] : []);
      carriersOf.set(k, s);
    }
    return s;
  };
  const addCarrier = (ref: ArticleRef, item: SourcedItem) => {
    const s = sourcesOf(ref);
    if (s.has(item.source)) return;
    s.add(item.source);
    plan.carriers.push({ ref, source: item.source, url: item.article.url ?? null });
  };
  const duplicate = (item: SourcedItem, reason: 'same-item' | 'same-url' | 'near-duplicate', ref: ArticleRef) => {
    plan.outcomes.push({ status: 'duplicate', reason, ref });
    const key = seenKey(item.source, item.externalId);
    if (!batchItems.has(key)) {
      batchItems.set(key, ref);
      plan.seen.push({ source: item.source, externalId: item.externalId, canonicalUrl: item.canonicalUrl, ref });
    }
    if (reason !== 'same-item') addCarrier(ref, item);
  };

  for (const [i, item] of items.entries()) {
    const key = seenKey(item.source, item.externalId);
    const sameItem = found.bySourceItem.get(key) ?? batchItems.get(key);
    if (sameItem !== undefined) {
      duplicate(item, 'same-item', typeof sameItem === 'string' ? { id: sameItem } : sameItem);
      continue;
    }
    if (item.canonicalUrl !== null) {
      const sameUrl = found.byUrl.get(item.canonicalUrl) ?? batchUrls.get(item.canonicalUrl);
      if (sameUrl !== undefined) {
        duplicate(item, 'same-url', typeof sameUrl === 'string' ? { id: sameUrl } : sameUrl);
        continue;
      }
    }
    const near = nearMatch(i, item, found, batchKeys, items, plan.store, sourcesOf, rule);
    if (near !== undefined) {
      duplicate(item, 'near-duplicate', near);
      continue;
    }
    const ref: ArticleRef = { pending: plan.store.length };
    plan.store.push(i);
    plan.outcomes.push({ status: 'stored', pending: ref.pending });
    batchItems.set(key, ref);
    plan.seen.push({ source: item.source, externalId: item.externalId, canonicalUrl: item.canonicalUrl, ref });
    if (item.canonicalUrl !== null && !batchUrls.has(item.canonicalUrl)) batchUrls.set(item.canonicalUrl, ref);
    for (const k of item.nearKeys) {
      const list = batchKeys.get(k);
      if (list) list.push(ref.pending);
      else batchKeys.set(k, [ref.pending]);
    }
    addCarrier(ref, item);
  }
  return plan;
}

/** The first candidate (stored before, then earlier in the batch) that is the same story from another source. */
function nearMatch(
  index: number,
  item: SourcedItem,
  found: SeenLookup,
  batchKeys: Map<string, number[]>,
  items: readonly SourcedItem[],
  store: number[],
  sourcesOf: (ref: ArticleRef) => Set<string>,
  rule: NearDuplicateRule,
): ArticleRef | undefined {
  if (item.nearKeys.length === 0) return undefined;
  for (const id of found.nearCandidates.get(index) ?? []) {
    const c = found.candidates.get(id);
    const ref = { id };
    if (c && !sourcesOf(ref).has(item.source) && rule.isNearDuplicate(item.article.content, c.content)) return ref;
  }
  const triedPending = new Set<number>();
  for (const k of item.nearKeys) {
    for (const p of batchKeys.get(k) ?? []) {
      if (triedPending.has(p)) continue;
      triedPending.add(p);
      const ref = { pending: p };
      if (!sourcesOf(ref).has(item.source) && rule.isNearDuplicate(item.article.content, items[store[p]!]!.article.content)) return ref;
    }
  }
  return undefined;
}
