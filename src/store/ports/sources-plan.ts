/**
 * The dedup decision of `SourceStore.ingestItems` for both engines: a pure function over what the adapter read
 * inside its write transaction; the adapter writes what the plan lists in that same transaction.
 * Rules per item, first match wins: same (source, externalId) -> `same-item`; same canonical URL -> `same-url`;
 * the source's repeat key (undated: within the near window) -> `same-headline`; a near-key candidate the rule
 * calls a near-duplicate and this source has not carried -> `near-duplicate`. Earlier items of the batch count
 * too; an item whose rules throw is `failed` and leaves no record.
 */
import { isUndatedRepeatKey } from '../../dedup/repeat.js';
import { errorClass } from './errors.js';
import { read, type Rows, type Step } from '../../runtime/steps.js';
import type { DuplicateReason, NearDuplicateRule, SourcedItem } from './index.js';

/** An article: stored already (`id`), or the `pending`-th item to insert in this batch. */
export type ArticleRef = { id: string } | { pending: number };

export interface SeenLookup {
  /** `seenKey(source, externalId)` -> article id (repeat keys are looked up here too). */
  bySourceItem: Map<string, string>;
  /** `seenKey(source, key)` -> when last recorded (epoch ms), for the undated repeat keys' window. */
  seenAt?: Map<string, number>;
  byUrl: Map<string, string>;
  /** Item index -> ids of other sources' articles sharing a near key, not carried by its source; ranked, capped. */
  nearCandidates: Map<number, string[]>;
  candidates: Map<string, string>;
}

/**
 * Candidates per item for the precise decision. Some true duplicates share a single key, but so do most unrelated
 * headlines: single-key ones are capped harder, to the newest (wires' copies of a story arrive minutes apart).
 */
export const NEAR_CANDIDATES_MAX = 20;
export const NEAR_SINGLE_KEY_CANDIDATES = 5;

/** Per near key only the newest articles count, so a key common to many headlines costs bounded work per item. */
export const NEAR_KEY_FANOUT = 50;

/**
 * Per near key, the window's articles having it: [article id, first source, time], at most NEAR_KEY_FANOUT, newest
 * first.
 */
export type KeyHits = Map<string, [string, string, number][]>;

export function keyHits(rows: Iterable<[string, string, string, number]>): KeyHits {
  const out: KeyHits = new Map();
  for (const [key, id, source, at] of rows) {
    const list = out.get(key);
    if (list) list.push([id, source, at]);
    else out.set(key, [[id, source, at]]);
  }
  for (const [key, list] of out) {
    if (list.length <= NEAR_KEY_FANOUT) continue;
    list.sort((a, b) => b[2] - a[2]);
    out.set(key, list.slice(0, NEAR_KEY_FANOUT));
  }
  return out;
}

/** Candidates in trial order (more shared keys, then newest id); the source's own stories are left out (updates). */
export function rankNearCandidates(item: SourcedItem, hits: KeyHits): { id: string; shared: number }[] {
  const counts = new Map<string, number>();
  for (const key of distinctKeys(item).slice(0, NEAR_LOOKUP_KEYS_MAX)) {
    for (const [id, source] of hits.get(key) ?? [])
      if (source !== item.source) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return [...counts.entries()]
    .map(([id, shared]) => ({ id, shared }))
    .sort((a, b) => b.shared - a.shared || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Ranked candidates minus those the source carries, capped; `carried` is asked about chosen pairs only, in rounds. */
export function* chooseCandidates(
  ranked: Map<number, { id: string; shared: number }[]>,
  near: readonly (readonly [number, SourcedItem])[],
  carried: (pairs: [string, string][]) => Rows<[string, string][]>,
): Step<Map<number, string[]>> {
  const sourceOf = new Map(near.map(([i, item]) => [i, item.source]));
  const excluded = new Set<string>();
  const asked = new Set<string>();
  const pair = (id: string, source: string) => `${id}\n${source}`;
  for (;;) {
    const out = new Map<number, string[]>();
    const ask: [string, string][] = [];
    for (const [i, list] of ranked) {
      const source = sourceOf.get(i)!;
      const ids: string[] = [];
      let single = 0;
      for (const c of list) {
        if (ids.length === NEAR_CANDIDATES_MAX) break;
        const p = pair(c.id, source);
        if (excluded.has(p)) continue;
        if (c.shared <= 1 && single++ === NEAR_SINGLE_KEY_CANDIDATES) break;
        ids.push(c.id);
        if (!asked.has(p)) {
          asked.add(p);
          ask.push([c.id, source]);
        }
      }
      out.set(i, ids);
    }
    if (ask.length === 0) return out;
    const found = yield* read(carried(ask));
    if (found.length === 0) return out;
    for (const [id, source] of found) excluded.add(pair(id, source));
  }
}

/** Keys per item the adapters look up (nearDuplicateKeys gives 15-30); an item's further keys are stored only. */
export const NEAR_LOOKUP_KEYS_MAX = 64;

export const distinctKeys = (item: SourcedItem): string[] => [...new Set(item.nearKeys)];

export type PlannedOutcome =
  | { status: 'stored'; pending: number }
  | { status: 'duplicate'; reason: DuplicateReason; ref: ArticleRef }
  | { status: 'failed'; errClass: string };

export interface IngestPlan {
  outcomes: PlannedOutcome[];
  /** Indexes into `items` of the articles to insert, in order (pending n = store[n]). */
  store: number[];
  /**
   * Exact-dedup records (repeat keys too) to insert or refresh, with why the item matched its article (null: stored).
   */
  seen: {
    source: string;
    externalId: string;
    canonicalUrl: string | null;
    ref: ArticleRef;
    reason: DuplicateReason | null;
  }[];
  /** Carrier records to add: the first source of each stored article (reason null), and the sources of duplicates. */
  carriers: { ref: ArticleRef; source: string; url: string | null; reason: DuplicateReason | null }[];
}

export const seenKey = (source: string, externalId: string) => `${source}\n${externalId}`;

export function planIngest(
  items: readonly SourcedItem[],
  found: SeenLookup,
  rule: NearDuplicateRule,
  now?: number,
): IngestPlan {
  const batch = new BatchPlan(items, found, rule, now);
  for (const [i, item] of items.entries()) batch.take(i, item);
  return batch.plan;
}

/** Why an item is a duplicate, and of which article. */
type Match = { reason: DuplicateReason; ref: ArticleRef };

/** The plan being made, and what the batch adds so far, visible to its later items. */
class BatchPlan {
  readonly plan: IngestPlan = { outcomes: [], store: [], seen: [], carriers: [] };
  private readonly batchItems = new Map<string, ArticleRef>();
  private readonly batchUrls = new Map<string, ArticleRef>();
  /** Near key -> source -> pending articles of this batch first stored by that source (newest last). */
  private readonly batchKeys = new Map<string, Map<string, number[]>>();
  /** Carrier sources known per article, including those this plan adds. */
  private readonly carriersOf = new Map<string, Set<string>>();

  constructor(
    private readonly items: readonly SourcedItem[],
    private readonly found: SeenLookup,
    private readonly rule: NearDuplicateRule,
    private readonly now: number | undefined,
  ) {}

  take(i: number, item: SourcedItem): void {
    let dup: Match | undefined;
    try {
      dup = this.match(i, item);
    } catch (e) {
      // Near comparisons run on outside text: an unexpected error fails this item only (nothing of it is planned yet).
      this.plan.outcomes.push({ status: 'failed', errClass: errorClass(e) });
      return;
    }
    if (dup === undefined) this.store(i, item);
    else this.duplicate(item, dup.reason, dup.ref);
  }

  /** The stored article (or earlier item of the batch) `item` is a duplicate of, and why; undefined: it is new. */
  private match(i: number, item: SourcedItem): Match | undefined {
    const ref = (r: string | ArticleRef): ArticleRef => (typeof r === 'string' ? { id: r } : r);
    const key = seenKey(item.source, item.externalId);
    const sameItem = this.found.bySourceItem.get(key) ?? this.batchItems.get(key);
    if (sameItem !== undefined) return { reason: 'same-item', ref: ref(sameItem) };
    if (item.canonicalUrl !== null) {
      const sameUrl = this.found.byUrl.get(item.canonicalUrl) ?? this.batchUrls.get(item.canonicalUrl);
      if (sameUrl !== undefined) return { reason: 'same-url', ref: ref(sameUrl) };
    }
    if (item.repeatKey) {
      const repeat =
        this.storedRepeat(item.source, item.repeatKey) ?? this.batchItems.get(seenKey(item.source, item.repeatKey));
      if (repeat !== undefined) return { reason: 'same-headline', ref: ref(repeat) };
    }
    const near = this.nearMatch(i, item);
    return near === undefined ? undefined : { reason: 'near-duplicate', ref: near };
  }

  /**
   * A stored repeat key: an undated one counts within the near window only (a recurring headline on another day is
   * new).
   */
  private storedRepeat(source: string, key: string): string | undefined {
    const k = seenKey(source, key);
    const id = this.found.bySourceItem.get(k);
    if (id === undefined || !isUndatedRepeatKey(key) || this.now === undefined) return id;
    const at = this.found.seenAt?.get(k);
    return at !== undefined && at >= this.now - this.rule.windowMs ? id : undefined;
  }

  /** The first candidate (stored before, then earlier in the batch) that is the same story from another source. */
  private nearMatch(i: number, item: SourcedItem): ArticleRef | undefined {
    if (item.nearKeys.length === 0) return undefined;
    for (const id of this.found.nearCandidates.get(i) ?? []) {
      const content = this.found.candidates.get(id);
      const ref = { id };
      if (
        content !== undefined &&
        !this.sourcesOf(ref).has(item.source) &&
        this.rule.isNearDuplicate(item.article.content, content)
      )
        return ref;
    }
    // Earlier items of the batch from other sources, NEAR_KEY_FANOUT newest per key, ranked and capped as above.
    const shared = new Map<number, number>();
    for (const k of new Set(item.nearKeys)) {
      for (const [source, list] of this.batchKeys.get(k) ?? []) {
        if (source === item.source) continue;
        for (let j = Math.max(0, list.length - NEAR_KEY_FANOUT); j < list.length; j++)
          shared.set(list[j]!, (shared.get(list[j]!) ?? 0) + 1);
      }
    }
    const pending = [...shared.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
    let tried = 0;
    let single = 0;
    for (const [p, n] of pending) {
      const ref = { pending: p };
      if (this.sourcesOf(ref).has(item.source)) continue;
      if (tried++ === NEAR_CANDIDATES_MAX || (n <= 1 && single++ === NEAR_SINGLE_KEY_CANDIDATES)) break;
      if (this.rule.isNearDuplicate(item.article.content, this.items[this.plan.store[p]!]!.article.content)) return ref;
    }
    return undefined;
  }

  private store(i: number, item: SourcedItem): void {
    const ref: ArticleRef = { pending: this.plan.store.length };
    this.plan.store.push(i);
    this.plan.outcomes.push({ status: 'stored', pending: ref.pending });
    this.record(item.source, item.externalId, item.canonicalUrl, ref, null);
    if (item.repeatKey) this.record(item.source, item.repeatKey, null, ref, null);
    // A URL the batch already has made this item a `same-url` duplicate: an item stored here has a new one.
    if (item.canonicalUrl !== null) this.batchUrls.set(item.canonicalUrl, ref);
    for (const k of new Set(item.nearKeys)) {
      let bySource = this.batchKeys.get(k);
      if (!bySource) this.batchKeys.set(k, (bySource = new Map()));
      const list = bySource.get(item.source);
      if (list) list.push(ref.pending);
      else bySource.set(item.source, [ref.pending]);
    }
    this.addCarrier(ref, item, null);
  }

  private duplicate(item: SourcedItem, reason: DuplicateReason, ref: ArticleRef): void {
    this.plan.outcomes.push({ status: 'duplicate', reason, ref });
    this.record(item.source, item.externalId, item.canonicalUrl, ref, reason);
    if (reason !== 'same-item' && reason !== 'same-headline') this.addCarrier(ref, item, reason);
  }

  private record(
    source: string,
    externalId: string,
    canonicalUrl: string | null,
    ref: ArticleRef,
    reason: DuplicateReason | null,
  ): void {
    const key = seenKey(source, externalId);
    if (this.batchItems.has(key)) return;
    this.batchItems.set(key, ref);
    this.plan.seen.push({ source, externalId, canonicalUrl, ref, reason });
  }

  private sourcesOf(ref: ArticleRef): Set<string> {
    const k = 'id' in ref ? `i:${ref.id}` : `p:${ref.pending}`;
    let s = this.carriersOf.get(k);
    if (!s) {
      // A stored article's carriers from before this batch are the query's business (nearCandidates).
      s = new Set();
      this.carriersOf.set(k, s);
    }
    return s;
  }

  private addCarrier(ref: ArticleRef, item: SourcedItem, reason: DuplicateReason | null): void {
    const s = this.sourcesOf(ref);
    if (s.has(item.source)) return;
    s.add(item.source);
    this.plan.carriers.push({ ref, source: item.source, url: item.article.url ?? null, reason });
  }
}

/** Prefix of textless items' records: they have no article, so lookups skip them and never match a real id. */
export const TEXTLESS_KEY = 'textless:';
