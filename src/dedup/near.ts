/**
 * Near-duplicate headlines: the same story from two wires within 24 hours. Candidate keys (lsh.ts) fit an indexed
 * column; similarity.ts decides each candidate pair. A copy with zero-width characters gets the same keys.
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

/** Texts kept prepared (the store compares one new item with several candidates): two generations of CACHE_SIZE. */
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

/** The final, precise decision on a candidate pair. */
export function isNearDuplicate(a: string | Prepared, b: string | Prepared): boolean {
  return decide(prepared(a), prepared(b));
}
