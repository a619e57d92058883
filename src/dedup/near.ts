/**
 * Near-duplicate headlines across sources: the same story from two wires within 24 hours.
 *
 * Candidate keys: MinHash LSH over the normalised token set (normalize.ts): BANDS bands of ROWS rows,
 * each key `<band><hash>` (base 36, at most 10 characters), so a store can index them. The decision:
 * token-set similarity with guards (similarity.ts), thresholds measured on eval/near-duplicates.jsonl
 * (`npm run eval:enrich`).
 */
import { normalizeHeadline } from './normalize.js';
import { decide } from './similarity.js';

export const NEAR_DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000;

const BANDS = 20;
const ROWS = 2;

/** 32-bit FNV-1a of a string, then a seeded mix (one hash function per seed). */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mix(x: number, seed: number): number {
  let h = (x ^ Math.imul(seed + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Tokens that carry no story on their own are left out of the keys (they still count in the decision). */
const GENERIC = new Set(['share', 'rise', 'fall', 'market', 'investor', 'trader', 'analyst', 'report', 'company', 'group', 'plan', 'see', 'expect']);

export function minhashKeys(tokens: Iterable<string>, bands = BANDS, rows = ROWS): string[] {
  const hashes = [...tokens].filter((t) => !GENERIC.has(t)).map(fnv);
  if (hashes.length === 0) return [];
  const keys: string[] = [];
  for (let b = 0; b < bands; b++) {
    let band = 0x811c9dc5;
    for (let r = 0; r < rows; r++) {
      const seed = b * rows + r;
      let min = 0xffffffff;
      for (const h of hashes) {
        const v = mix(h, seed);
        if (v < min) min = v;
      }
      band = Math.imul(band ^ min, 0x01000193) >>> 0;
    }
    keys.push(`${b.toString(36)}${band.toString(36)}`);
  }
  return [...new Set(keys)];
}

/** Locality-sensitive keys of a headline; two near-duplicates share at least one with high probability. */
export function nearDuplicateKeys(text: string): string[] {
  return minhashKeys(normalizeHeadline(text).tokens);
}

/** The final, precise decision on a candidate pair (measured thresholds). */
export function isNearDuplicate(a: string, b: string): boolean {
  return decide(normalizeHeadline(a), normalizeHeadline(b));
}
