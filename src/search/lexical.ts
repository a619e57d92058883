/** The fusion of hybrid search: the keyword ranking (`VectorStore.lexicalSearch`) merged with the semantic one. */
import type { Scored } from './rank.js';

/** How the two rankings become one. */
export type Fusion =
  /** Reciprocal-rank fusion: each list adds `weight / (k + rank)` (rank from 1) to an article's score. */
  | { kind: 'rrf'; k: number; lexicalWeight?: number }
  /** Weighted sum of per-list normalised scores (best 1, worst kept 0); a list without the article gives it 0. */
  | { kind: 'weighted'; alpha: number };

/** A weighted sum, 0.9 semantic / 0.1 lexical: best on the eval dev split (npm run eval:search; docs/search.md). */
export const DEFAULT_FUSION: Fusion = { kind: 'weighted', alpha: 0.9 };

/** The two rankings as one, best first; ties go to the greater (newer) id: recency never outranks relevance. */
export function fuseRankings(
  semantic: readonly Scored[],
  lexical: readonly Scored[],
  fusion: Fusion = DEFAULT_FUSION,
): Scored[] {
  const score = new Map<string, number>();
  const add = (id: string, s: number) => score.set(id, (score.get(id) ?? 0) + s);
  if (fusion.kind === 'rrf') {
    const wl = fusion.lexicalWeight ?? 1;
    semantic.forEach((x, i) => add(x.id, 1 / (fusion.k + i + 1)));
    lexical.forEach((x, i) => add(x.id, wl / (fusion.k + i + 1)));
  } else {
    const norm = (list: readonly Scored[], w: number) => {
      if (list.length === 0) return;
      const hi = list[0]!.score;
      const lo = list[list.length - 1]!.score;
      for (const x of list) add(x.id, w * (hi === lo ? 1 : (x.score - lo) / (hi - lo)));
    };
    // A lone list keeps its own order (its members all score > 0 except its last, ranked last anyway).
    for (const x of semantic) add(x.id, 0);
    for (const x of lexical) add(x.id, 0);
    norm(semantic, fusion.alpha);
    norm(lexical, 1 - fusion.alpha);
  }
  return [...score]
    .map(([id, s]) => ({ id, score: s }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}
