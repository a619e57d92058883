/**
 * One slice of `ingestItems`, decided once for both engines; adapters only read and write rows (SliceRows) in the
 * slice's transaction. A generator of steps: SQLite drives it synchronously, PostgreSQL awaits each step.
 */
import { LRUCache } from 'lru-cache';
import type { StoredArticle } from '../../domain/articles.js';
import type { DuplicateReason, ItemOutcome, NearDuplicateRule, NewArticle, SourcedItem } from './index.js';
import {
  chooseCandidates,
  distinctKeys,
  keyHits,
  NEAR_KEY_FANOUT,
  NEAR_LOOKUP_KEYS_MAX,
  planIngest,
  rankNearCandidates,
  seenKey,
  type ArticleRef,
  type SeenLookup,
} from './sources-plan.js';
import { patiently } from './errors.js';
import { nextTurn } from '../../runtime/slices.js';
import { read, type Rows, type Step } from '../../runtime/steps.js';

/** The rows a slice reads and writes, in the adapter's transaction. */
export interface SliceRows {
  /** The exact-dedup records of these (source, external id) pairs. */
  seenByItem(
    keys: [string, string][],
  ): Rows<{ source: string; external_id: string; article_id: string; seen_at: number | string }[]>;
  /** Per canonical URL that has records, the article of its first one. */
  seenByUrl(urls: string[]): Rows<{ url: string; articleId: string }[]>;
  /** Per near key, its articles from `from` on, at least the `perKey` newest: [key, article id, first source, at]. */
  nearHits(keys: string[], from: number, perKey: number): Rows<[string, string, string, number][]>;
  /** Which of these (article id, source) pairs are carrier records. */
  carried(pairs: [string, string][]): Rows<[string, string][]>;
  contents(ids: string[]): Rows<{ id: string; content: string }[]>;
  insertArticles(articles: NewArticle[], at: number | (() => number)): Rows<StoredArticle[]>;
  /** Inserts or refreshes exact-dedup records: [source, external id, canonical URL, article id, reason]. */
  upsertSeen(rows: [string, string, string | null, string, DuplicateReason | null][], now: number): Rows<void>;
  /** [near key, article id, first source, at]. */
  insertKeys(rows: [string, string, string, number][]): Rows<void>;
  /** Carrier records (existing pairs are kept): [article id, source, url, reason], in order. */
  insertCarriers(rows: [string, string, string | null, DuplicateReason | null][], now: number): Rows<void>;
}

/** The candidates' content cache of one store (an article's content never changes). */
export const contentCache = (): LRUCache<string, string> => new LRUCache<string, string>({ max: 16_384 });

export interface SliceContext {
  rows: SliceRows;
  rule: NearDuplicateRule;
  contents: LRUCache<string, string>;
}

/** Plans and writes one slice; driven inside the slice's transaction, after its write lock, so the clock is too. */
export function* ingestSlice(
  items: SourcedItem[],
  at: number | (() => number),
  ctx: SliceContext,
): Step<ItemOutcome[]> {
  const { rows, rule, contents } = ctx;
  const now = typeof at === 'number' ? at : at();
  const plan = planIngest(items, yield* lookup(items, now, ctx), rule, now);
  const articles = plan.store.map((i) => items[i]!.article);
  const stored = articles.length > 0 ? yield* read(rows.insertArticles(articles, at)) : [];
  const idOf = (ref: ArticleRef) => ('id' in ref ? ref.id : stored[ref.pending]!.id);
  if (plan.seen.length > 0)
    yield* read(
      rows.upsertSeen(
        plan.seen.map((s) => [s.source, s.externalId, s.canonicalUrl, idOf(s.ref), s.reason]),
        now,
      ),
    );
  const keys: [string, string, string, number][] = [];
  for (const [n, i] of plan.store.entries()) {
    const article = stored[n]!;
    contents.set(article.id, article.content);
    const keyTime = Date.parse(article.received_at);
    for (const k of distinctKeys(items[i]!)) keys.push([k, article.id, items[i]!.source, keyTime]);
  }
  if (keys.length > 0) yield* read(rows.insertKeys(keys));
  if (plan.carriers.length > 0)
    yield* read(
      rows.insertCarriers(
        plan.carriers.map((c) => [idOf(c.ref), c.source, c.url, c.reason]),
        now,
      ),
    );
  return plan.outcomes.map((o): ItemOutcome => {
    if (o.status === 'stored')
      return { status: 'stored', id: stored[o.pending]!.id, received_at: stored[o.pending]!.received_at };
    if (o.status === 'failed') return o;
    return { status: 'duplicate', reason: o.reason, id: idOf(o.ref) };
  });
}

/** What the plan needs to know of the stored records: exact matches, then near-duplicate candidates. */
function* lookup(items: SourcedItem[], now: number, { rows, rule, contents }: SliceContext): Step<SeenLookup> {
  const seenAt = new Map<string, number>();
  const found: SeenLookup = {
    bySourceItem: new Map(),
    byUrl: new Map(),
    nearCandidates: new Map(),
    candidates: new Map(),
    seenAt,
  };
  // Each item's external id and its repeat key, both under the item's source.
  const sourceKeys: [string, string][] = [];
  for (const item of items) {
    sourceKeys.push([item.source, item.externalId]);
    if (item.repeatKey) sourceKeys.push([item.source, item.repeatKey]);
  }
  for (const r of yield* read(rows.seenByItem(sourceKeys))) {
    // A record with no article is an item offered without text (TEXTLESS_KEY): no item's match.
    if (r.article_id === '') continue;
    const key = seenKey(r.source, r.external_id);
    found.bySourceItem.set(key, r.article_id);
    seenAt.set(key, Number(r.seen_at));
  }
  const urls = [...new Set(items.flatMap((i) => (i.canonicalUrl === null ? [] : [i.canonicalUrl])))];
  if (urls.length > 0) for (const r of yield* read(rows.seenByUrl(urls))) found.byUrl.set(r.url, r.articleId);
  // Items an exact record already decides need no near candidates.
  const near = [...items.entries()].filter(
    ([, item]) =>
      item.nearKeys.length > 0 &&
      !found.bySourceItem.has(seenKey(item.source, item.externalId)) &&
      (item.canonicalUrl === null || !found.byUrl.has(item.canonicalUrl)),
  );
  if (near.length === 0) return found;
  const keys = new Set(near.flatMap(([, item]) => distinctKeys(item).slice(0, NEAR_LOOKUP_KEYS_MAX)));
  const hits = keyHits(yield* read(rows.nearHits([...keys], now - rule.windowMs, NEAR_KEY_FANOUT)));
  const ranked = new Map(near.map(([i, item]) => [i, rankNearCandidates(item, hits)]));
  // Articles the source carries are no candidates: those it stored first show in the hits, merged copies are asked for.
  const chosen = yield* chooseCandidates(ranked, near, (pairs) => rows.carried(pairs));
  const missing = new Set<string>();
  for (const [i, ids] of chosen) {
    found.nearCandidates.set(i, ids);
    for (const id of ids) {
      const content = contents.get(id);
      if (content !== undefined) found.candidates.set(id, content);
      else missing.add(id);
    }
  }
  if (missing.size > 0) {
    for (const r of yield* read(rows.contents([...missing]))) {
      contents.set(r.id, r.content);
      found.candidates.set(r.id, r.content);
    }
  }
  return found;
}

/** Items per transaction, an event-loop turn between (docs/decisions/ingest-slices.md); done slices stay stored. */
export const INGEST_SLICE_ITEMS = 4;

export interface SliceOptions {
  maxItems?: number;
}

/** `ingest` over consecutive slices, a turn of the event loop between them; outcomes in item order. */
export async function ingestInSlices<T, R>(
  items: readonly T[],
  ingest: (slice: T[]) => Promise<R[]>,
  opts: SliceOptions = {},
): Promise<R[]> {
  const size = Math.max(1, Math.trunc(opts.maxItems ?? INGEST_SLICE_ITEMS));
  const out: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    if (start > 0) await nextTurn();
    const slice = items.slice(start, start + size);
    const answered = await patiently(() => ingest(slice));
    if (answered.length !== slice.length)
      throw new Error(`a slice of ${slice.length} items was answered for ${answered.length}`);
    for (const r of answered) out.push(r);
  }
  return out;
}
