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

/** Tokens that say little about which story it is: they count less in the weighted similarity. */
const LIGHT = new Set(['share', 'rise', 'fall', 'quarter', 'annual', 'company', 'market', 'price', 'report', 'plan', 'deal', 'record', 'high', 'low', 'first', 'time', 'after', 'amid']);
export function weight(token: string): number {
  if (token.startsWith('~') || token.startsWith('#')) return 2;
  return LIGHT.has(token) ? 0.3 : 1;
}

/** Jaccard with token weights (symbols and numbers weigh 2, generic words 0.3). */
export function weightedJaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  let union = 0;
  for (const x of a) {
    const w = weight(x);
    union += w;
    if (b.has(x)) inter += w;
  }
  for (const x of b) if (!a.has(x)) union += weight(x);
  return union === 0 ? 1 : inter / union;
}

const UP = new Set(['rise', 'beat', 'raise', 'win', 'high', 'highest']);
const DOWN = new Set(['fall', 'miss', 'cut', 'lose', 'low', 'lowest']);
const lean = (t: Set<string>) => {
  const up = [...UP].some((x) => t.has(x));
  const down = [...DOWN].some((x) => t.has(x));
  return up === down ? 0 : up ? 1 : -1;
};
/** One says up (rises, beats, raises, wins), the other down (falls, misses, cuts, loses): not the same story. */
export function directionConflict(a: Set<string>, b: Set<string>): boolean {
  const x = lean(a);
  const y = lean(b);
  return x !== 0 && y !== 0 && x !== y;
}

/** Words of which a story has one: two headlines with different ones are different stories. */
const EXCLUSIVE: string[][] = [['consumer', 'producer', 'import', 'export', 'wholesal'], ['buy', 'sell'], ['h1', 'h2']];
export function qualifierConflict(a: Set<string>, b: Set<string>): boolean {
  for (const group of EXCLUSIVE) {
    const x = group.filter((w) => a.has(w));
    const y = group.filter((w) => b.has(w));
    if (x.length && y.length && !x.some((w) => y.includes(w))) return true;
  }
  return false;
}

/** Both name people/products/companies outside the dictionary and none in common (`Blackwell` vs `Rubin`). */
export function entitiesConflict(a: Set<string>, b: Set<string>): boolean {
  if (a.size === 0 || b.size === 0) return false;
  for (const e of a) if (b.has(e)) return false;
  return true;
}

/** What kind of corporate or economic event a headline reports (stemmed, normalised tokens). */
const EVENTS: Record<string, string[]> = {
  results: ['profit', 'revenue', 'estimate', 'beat', 'miss', 'loss', 'margin'],
  outlook: ['outlook'],
  jobs: ['job'],
  deal: ['acquire', 'merger', 'stake', 'split', 'sell', 'bid'],
  recall: ['recal'],
  leadership: ['ceo', 'resign', 'name', 'chairman', 'cfo'],
  legal: ['sue', 'probe', 'fine', 'antitrust', 'court', 'appeal', 'settl', 'lawsuit', 'trial'],
  approval: ['approve', 'fda'],
  payout: ['buyback', 'dividend'],
  outage: ['outag', 'cyber', 'breach'],
  launch: ['unveil'],
  invest: ['invest', 'spend'],
  output: ['deliveri', 'production', 'output', 'order'],
};
const EVENT_OF = new Map<string, string>();
for (const [event, words] of Object.entries(EVENTS)) for (const w of words) EVENT_OF.set(w, event);
export function events(tokens: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const t of tokens) {
    const e = EVENT_OF.get(t);
    if (e) out.add(e);
  }
  return out;
}
/** Both report a kind of event and no kind in common (a recall vs job cuts at the same company). */
export function eventsConflict(a: Set<string>, b: Set<string>): boolean {
  const x = events(a);
  const y = events(b);
  if (x.size === 0 || y.size === 0) return false;
  for (const e of x) if (y.has(e)) return false;
  return true;
}

export function guarded(a: Normalized, b: Normalized): boolean {
  return (
    tickersConflict(a.tickers, b.tickers) ||
    numbersConflict(a.numbers, b.numbers) ||
    directionConflict(a.tokens, b.tokens) ||
    qualifierConflict(a.tokens, b.tokens) ||
    eventsConflict(a.tokens, b.tokens) ||
    entitiesConflict(a.entities, b.entities)
  );
}

/** Chosen on the dev pairs of eval/near-duplicates.jsonl (scripts/eval-enrich.ts). */
export const THRESHOLD = 0.35;

export function decide(a: Normalized, b: Normalized): boolean {
  if (guarded(a, b)) return false;
  return weightedJaccard(a.tokens, b.tokens) >= THRESHOLD;
}
