/**
 * Offline evaluation of search quality: the labelled set's shape, recall@k, and a BM25 keyword
 * baseline to compare the embeddings with. Used by scripts/eval-search.ts and the tests; not part
 * of the public face (index.ts).
 */
import type { Scored } from '../../src/search/rank.js';
import { tokenize } from '../../src/store/ports/lexical-query.js';

export interface EvalSet {
  headlines: { id: string; text: string }[];
  queries: { id: string; text: string; relevant: string[] }[];
}

/** Checks the shape of a labelled set: unique ids, every query has relevant ids that exist. */
export function parseEvalSet(json: unknown): EvalSet {
  const fail = (why: string): never => {
    throw new Error(`invalid eval set: ${why}`);
  };
  const o = json as Partial<EvalSet> | null;
  if (!o || !Array.isArray(o.headlines) || !Array.isArray(o.queries)) return fail('needs headlines[] and queries[]');
  const ids = new Set<string>();
  for (const h of o.headlines) {
    if (typeof h?.id !== 'string' || typeof h.text !== 'string' || !h.text.trim())
      fail(`bad headline ${JSON.stringify(h)}`);
    if (ids.has(h.id)) fail(`duplicate headline id ${h.id}`);
    ids.add(h.id);
  }
  const qids = new Set<string>();
  for (const q of o.queries) {
    if (
      typeof q?.id !== 'string' ||
      typeof q.text !== 'string' ||
      !Array.isArray(q.relevant) ||
      q.relevant.length === 0
    ) {
      fail(`bad query ${JSON.stringify(q)}`);
    }
    if (qids.has(q.id)) fail(`duplicate query id ${q.id}`);
    qids.add(q.id);
    for (const r of q.relevant) if (!ids.has(r)) fail(`query ${q.id} names unknown headline ${r}`);
    if (new Set(q.relevant).size !== q.relevant.length) fail(`query ${q.id} repeats a relevant id`);
  }
  return { headlines: o.headlines, queries: o.queries };
}

/**
 * Okapi BM25 over a fixed set of documents (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
 * each distinct query term counted once). `topK` ranks only documents that share at least one term
 * with the query, best first, equal scores by id descending (as cosineTopK).
 */
export class Bm25 {
  private readonly docs: { id: string; tf: Map<string, number>; length: number }[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  constructor(
    docs: { id: string; text: string }[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    this.docs = docs.map(({ id, text }) => {
      const tokens = tokenize(text);
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return { id, tf, length: tokens.length };
    });
    this.avgLength = this.docs.reduce((s, d) => s + d.length, 0) / Math.max(1, this.docs.length);
  }

  idf(term: string): number {
    const n = this.docs.length;
    const df = this.df.get(term) ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  topK(query: string, k: number): Scored[] {
    const terms = [...new Set(tokenize(query))];
    const scored: Scored[] = [];
    for (const d of this.docs) {
      let score = 0;
      for (const t of terms) {
        const f = d.tf.get(t);
        if (!f) continue;
        score +=
          (this.idf(t) * f * (this.k1 + 1)) / (f + this.k1 * (1 - this.b + (this.b * d.length) / this.avgLength));
      }
      if (score > 0) scored.push({ id: d.id, score });
    }
    scored.sort((x, y) => y.score - x.score || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0));
    return scored.slice(0, k);
  }
}

/** Share of the relevant ids found among the first k ranked ids. */
export function recallAtK(ranked: string[], relevant: string[], k: number): number {
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

export function mean(xs: number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((s, x) => s + x, 0) / xs.length;
}

/** Reciprocal rank of the first relevant id among the first k ranked ids (0 when none is there). */
export function reciprocalRankAtK(ranked: string[], relevant: string[], k: number): number {
  const want = new Set(relevant);
  const at = ranked.slice(0, k).findIndex((id) => want.has(id));
  return at < 0 ? 0 : 1 / (at + 1);
}

/**
 * The split of a labelled query by a hash of its id (FNV-1a, 32 bits): even → `dev` (choose settings
 * on it), odd → `test` (report on it). Stable whatever the order of the set or what is added to it.
 */
export function splitOf(id: string): 'dev' | 'test' {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % 2 === 0 ? 'dev' : 'test';
}
