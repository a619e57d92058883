/**
 * Similarity measures and guards on normalised headlines (normalize.ts). `decide` is the method chosen by
 * measurement (scripts/eval-enrich.ts prints every method's precision and recall on the labelled pairs).
 */
import type { Normalized } from './normalize.js';

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

export function overlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / Math.min(a.size, b.size);
}

const unit = (n: string) => n.replace(/^[\d.]+/, '');

/** Different numbers of the same kind (`6%` vs `8%`, `25bp` vs `50bp`): a different story. */
export function numbersConflict(a: Set<string>, b: Set<string>): boolean {
  for (const u of ['%', 'bp', 'b', 'n']) {
    const x = [...a].filter((n) => unit(n) === u);
    const y = [...b].filter((n) => unit(n) === u);
    if (x.length && y.length && !x.some((n) => y.includes(n))) return true;
  }
  return false;
}

/** Both name companies and none in common: a different story. */
export function tickersConflict(a: Set<string>, b: Set<string>): boolean {
  if (a.size === 0 || b.size === 0) return false;
  for (const t of a) if (b.has(t)) return false;
  return true;
}

export const THRESHOLD = 0.5;

export function decide(a: Normalized, b: Normalized): boolean {
  if (tickersConflict(a.tickers, b.tickers) || numbersConflict(a.numbers, b.numbers)) return false;
  return jaccard(a.tokens, b.tokens) >= THRESHOLD;
}
