/**
 * Near-duplicate headlines across sources: the same story from two wires within 24 hours.
 *
 * Every headline is first written as a reader sees it (normalize.ts `canonicalHeadline`: invisible and
 * default-ignorable code points removed, NFKC compatibility forms folded, every whitespace form one space), so
 * a copy with soft hyphens or zero-width characters gets the same keys; any other identity key built on a
 * headline (an exact comparison of two headlines) should use `canonicalHeadline` too.
 *
 * `prepare(text)` computes a headline's normal form once (normalize.ts + the guard features of
 * similarity.ts); `nearDuplicateKeys` and `isNearDuplicate` take either that form or the text. Texts are
 * prepared through a small memo (the last 2-4 thousand texts), so a caller passing the same strings again
 * (the store compares one new item with several candidates) pays for normalisation once.
 *
 * Candidate keys (lsh.ts): MinHash LSH bands over the normalised tokens plus anchor keys (symbol or named
 * entity with a figure or an event kind); short strings, safe to store in an indexed column. The decision:
 * weighted token similarity with guards and a shared-anchor rule (similarity.ts), thresholds measured on
 * the dev part of eval/near-duplicates.jsonl (`npm run eval:enrich`).
 */
import { candidateKeys } from './lsh.js';
import { normalizeTokens, type Prepared } from './normalize.js';
import { annotate, decide } from './similarity.js';

export type { Prepared } from './normalize.js';
export const NEAR_DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The normal form of a headline, reusable by `nearDuplicateKeys` and `isNearDuplicate`. */
export function prepare(text: string): Prepared {
  return annotate(normalizeTokens(text));
}

/** Texts kept prepared: two generations of at most CACHE_SIZE each (no per-entry eviction cost). */
const CACHE_SIZE = 2048;
let recent = new Map<string, Prepared>();
let older = new Map<string, Prepared>();

function prepared(x: string | Prepared): Prepared {
  if (typeof x !== 'string') return x;
  let p = recent.get(x);
  if (p) return p;
  p = older.get(x) ?? prepare(x);
  if (recent.size >= CACHE_SIZE) {
    older = recent;
    recent = new Map();
  }
  recent.set(x, p);
  return p;
}

/** Locality-sensitive keys of a headline; two near-duplicates share at least one with high probability. */
export function nearDuplicateKeys(text: string | Prepared): string[] {
  const p = prepared(text);
  if (!p.keys) p.keys = candidateKeys(p);
  return p.keys;
}

/** The final, precise decision on a candidate pair (measured thresholds). */
export function isNearDuplicate(a: string | Prepared, b: string | Prepared): boolean {
  return decide(prepared(a), prepared(b));
}
