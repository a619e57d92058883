/**
 * Scoring of the labelled sets in eval/ (scripts/eval-enrich.ts prints it, test/enrich/eval.test.ts holds
 * the goals). Each line carries `split`: `dev` (rules and thresholds are tuned on it) or `test` (held out,
 * reported). Pure: the caller reads the files.
 */
import type { ArticleSentiment, TickerSentimentLabel } from '../../src/contract/index.js';
import { isNearDuplicate, nearDuplicateKeys, prepare, type Prepared } from '../../src/dedup/near.js';
import {
  THRESHOLD,
  THRESHOLD_NO_ANCHOR,
  guarded,
  jaccard,
  numbersConflict,
  overlap,
  sharesAnchor,
  tickersConflict,
  weightedJaccard,
} from '../../src/dedup/similarity.js';
import { enrich } from '../../src/enrich/index.js';

export type Split = 'dev' | 'test';
export interface TickerCase {
  split: Split;
  text: string;
  tickers: Record<string, TickerSentimentLabel>;
}
export interface SentimentCase {
  split: Split;
  text: string;
  label: Exclude<ArticleSentiment, null>;
}
export interface PairCase {
  split: Split;
  a: string;
  b: string;
  duplicate: boolean;
}

/**
 * The near-duplicate pair sets in eval/, each split dev/test by the MD5 of `a` (eval/README.md): the first set
 * (wire rewordings and template negatives), the second (institution and company aliases, units and quarters
 * written as words or abbreviations, figures in other units, template reuse with another slot) and the third
 * (kinds neither has, in batches each written before the rule was run on it).
 */
export const NEAR_DUPLICATE_SETS = [
  'near-duplicates.jsonl',
  'near-duplicates-forms.jsonl',
  'near-duplicates-kinds.jsonl',
] as const;

export function parseJsonl<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

const majority = <T>(xs: T[]): T => {
  const counts = new Map<T, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
};

export interface TickerScore {
  precision: number;
  recall: number;
  found: number;
  expected: number;
  correct: number;
  /**
   * Per-ticker sentiment accuracy over the correctly found tickers, and the majority-class baseline (class from dev).
   */
  sentimentAccuracy: number;
  sentimentBaseline: number;
  errors: string[];
}

export function scoreTickers(cases: TickerCase[], split: Split): TickerScore {
  const dev = cases.filter((c) => c.split === 'dev').flatMap((c) => Object.values(c.tickers));
  const base = majority(dev);
  let found = 0;
  let expected = 0;
  let correct = 0;
  let sentRight = 0;
  let baseRight = 0;
  const errors: string[] = [];
  for (const c of cases.filter((x) => x.split === split)) {
    const got = enrich(c.text).tickers;
    const want = c.tickers;
    found += got.length;
    expected += Object.keys(want).length;
    for (const t of got) {
      const w = want[t.ticker];
      if (w === undefined) {
        errors.push(`extra ${t.ticker}: ${c.text}`);
        continue;
      }
      correct++;
      if (w === t.sentiment) sentRight++;
      else errors.push(`sentiment ${t.ticker} ${t.sentiment} (want ${w}): ${c.text}`);
      if (w === base) baseRight++;
    }
    for (const w of Object.keys(want)) if (!got.some((t) => t.ticker === w)) errors.push(`missed ${w}: ${c.text}`);
  }
  return {
    precision: found ? correct / found : 1,
    recall: expected ? correct / expected : 1,
    found,
    expected,
    correct,
    sentimentAccuracy: correct ? sentRight / correct : 0,
    sentimentBaseline: correct ? baseRight / correct : 0,
    errors,
  };
}

export interface LabelScore {
  accuracy: number;
  baseline: number;
  baselineLabel: string;
  n: number;
  errors: string[];
}

export function scoreLabels(cases: SentimentCase[], split: Split): LabelScore {
  const base = majority(cases.filter((c) => c.split === 'dev').map((c) => c.label));
  const mine = cases.filter((c) => c.split === split);
  let right = 0;
  let baseRight = 0;
  const errors: string[] = [];
  for (const c of mine) {
    const got = enrich(c.text).sentiment;
    if (got === c.label) right++;
    else errors.push(`${String(got)} (want ${c.label}): ${c.text}`);
    if (c.label === base) baseRight++;
  }
  return {
    accuracy: right / mine.length,
    baseline: baseRight / mine.length,
    baselineLabel: base,
    n: mine.length,
    errors,
  };
}

export interface PairScore {
  precision: number;
  recall: number;
  tp: number;
  fp: number;
  fn: number;
  errors: string[];
}

export function scorePairs(cases: PairCase[], split: Split, same: (a: string, b: string) => boolean): PairScore {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const errors: string[] = [];
  for (const c of cases.filter((x) => x.split === split)) {
    const got = same(c.a, c.b);
    if (got && c.duplicate) tp++;
    else if (got) {
      fp++;
      errors.push(`false duplicate: ${c.a} | ${c.b}`);
    } else if (c.duplicate) {
      fn++;
      errors.push(`missed duplicate: ${c.a} | ${c.b}`);
    }
  }
  return { precision: tp + fp ? tp / (tp + fp) : 1, recall: tp + fn ? tp / (tp + fn) : 1, tp, fp, fn, errors };
}

/**
 * Share of true duplicate pairs that share at least one LSH key (the store finds them as candidates), and of other
 * pairs.
 */
export function keyRecall(
  cases: PairCase[],
  split: Split,
): { duplicates: number; others: number; keysPerHeadline: number } {
  let dup = 0;
  let dupHit = 0;
  let other = 0;
  let otherHit = 0;
  let keys = 0;
  let n = 0;
  for (const c of cases.filter((x) => x.split === split)) {
    const ka = nearDuplicateKeys(prepare(c.a));
    const kb = new Set(nearDuplicateKeys(prepare(c.b)));
    keys += ka.length + kb.size;
    n += 2;
    const hit = ka.some((k) => kb.has(k));
    if (c.duplicate) {
      dup++;
      if (hit) dupHit++;
    } else {
      other++;
      if (hit) otherHit++;
    }
  }
  return {
    duplicates: dup ? dupHit / dup : 1,
    others: other ? otherHit / other : 0,
    keysPerHeadline: n ? keys / n : 0,
  };
}

/** 64-bit SimHash over tokens (two 32-bit halves), Hamming distance. */
function simhash(tokens: Set<string>): [number, number] {
  const v = new Array<number>(64).fill(0);
  for (const t of tokens) {
    let h1 = 0x811c9dc5;
    let h2 = 0x1505;
    for (let i = 0; i < t.length; i++) {
      h1 = Math.imul(h1 ^ t.charCodeAt(i), 0x01000193);
      h2 = Math.imul(h2, 33) ^ t.charCodeAt(i);
    }
    for (let b = 0; b < 32; b++) {
      v[b]! += (h1 >>> b) & 1 ? 1 : -1;
      v[32 + b]! += (h2 >>> b) & 1 ? 1 : -1;
    }
  }
  let lo = 0;
  let hi = 0;
  for (let b = 0; b < 32; b++) {
    if (v[b]! > 0) lo |= 1 << b;
    if (v[32 + b]! > 0) hi |= 1 << b;
  }
  return [lo >>> 0, hi >>> 0];
}
const popcount = (x: number) => {
  let c = 0;
  for (let y = x >>> 0; y; y &= y - 1) c++;
  return c;
};
export function simhashDistance(a: Set<string>, b: Set<string>): number {
  const [a1, a2] = simhash(a);
  const [b1, b2] = simhash(b);
  return popcount(a1 ^ b1) + popcount(a2 ^ b2);
}

/** Word-shingle MinHash estimate of Jaccard on raw lower-case words (no normalisation): the plain baseline. */
function rawWords(s: string): Set<string> {
  return new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

export interface Method {
  name: string;
  /** Score: higher means more similar. */
  score: (a: Prepared, b: Prepared, ra: string, rb: string) => number;
  guards: 'none' | 'tickers+numbers' | 'all';
  thresholds: number[];
}

const range = (from: number, to: number, step: number) =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => Number((from + i * step).toFixed(3)));

export const METHODS: Method[] = [
  {
    name: 'raw word Jaccard',
    score: (_a, _b, ra, rb) => jaccard(rawWords(ra), rawWords(rb)),
    guards: 'none',
    thresholds: range(0.1, 0.9, 0.05),
  },
  {
    name: 'normalised Jaccard',
    score: (a, b) => jaccard(a.tokens, b.tokens),
    guards: 'none',
    thresholds: range(0.1, 0.9, 0.05),
  },
  {
    name: 'SimHash 64 bit (similar bits)',
    score: (a, b) => 64 - simhashDistance(a.tokens, b.tokens),
    guards: 'none',
    thresholds: range(36, 64, 1),
  },
  {
    name: 'normalised Jaccard, ticker+number guards',
    score: (a, b) => jaccard(a.tokens, b.tokens),
    guards: 'tickers+numbers',
    thresholds: range(0.1, 0.9, 0.05),
  },
  {
    name: 'normalised Jaccard, all guards',
    score: (a, b) => jaccard(a.tokens, b.tokens),
    guards: 'all',
    thresholds: range(0.1, 0.9, 0.05),
  },
  {
    name: 'overlap coefficient, all guards',
    score: (a, b) => overlap(a.tokens, b.tokens),
    guards: 'all',
    thresholds: range(0.2, 1, 0.05),
  },
  {
    name: 'SimHash 64 bit, all guards',
    score: (a, b) => 64 - simhashDistance(a.tokens, b.tokens),
    guards: 'all',
    thresholds: range(36, 64, 1),
  },
  {
    name: 'weighted Jaccard, all guards',
    score: (a, b) => weightedJaccard(a, b),
    guards: 'all',
    thresholds: range(0.1, 0.9, 0.05),
  },
];

export function methodJudge(m: Method, threshold: number): (a: string, b: string) => boolean {
  return (a, b) => {
    const na = prepare(a);
    const nb = prepare(b);
    if (m.guards === 'tickers+numbers' && (tickersConflict(na, nb) || numbersConflict(na, nb))) return false;
    if (m.guards === 'all' && guarded(na, nb)) return false;
    return m.score(na, nb, a, b) >= threshold;
  };
}

/** The threshold chosen on dev: the highest recall with precision >= goal, else the best F1. */
export function tuneOnDev(cases: PairCase[], m: Method, precisionGoal: number): number {
  let best: { t: number; r: number; p: number; f: number } | undefined;
  let bestF: { t: number; f: number } | undefined;
  for (const t of m.thresholds) {
    const s = scorePairs(cases, 'dev', methodJudge(m, t));
    const f = s.precision + s.recall ? (2 * s.precision * s.recall) / (s.precision + s.recall) : 0;
    if (s.precision >= precisionGoal && (!best || s.recall > best.r)) best = { t, r: s.recall, p: s.precision, f };
    if (!bestF || f > bestF.f) bestF = { t, f };
  }
  return (best ?? bestF)!.t;
}

export const chosenJudge = isNearDuplicate;

export const GOALS = {
  tickerPrecision: 0.95,
  tickerRecall: 0.85,
  dedupPrecision: 0.98,
  dedupRecall: 0.9,
};

// ---------------------------------------------------------------------------------------------------
// Sentence embeddings (all-MiniLM-L6-v2, the model semantic search already runs) as a second dedup signal.
// The caller embeds every headline of the pair set and passes the unit vectors by text; all below is pure.

/** Headline text -> its unit-length embedding. */
export type HeadlineVectors = ReadonlyMap<string, Float32Array>;

/** Cosine of two unit vectors (their dot product). Throws when the dimensions differ. */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`vectors of ${a.length} and ${b.length} dimensions`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function vectorOf(vectors: HeadlineVectors, text: string): Float32Array {
  const v = vectors.get(text);
  if (!v) throw new Error(`no embedding for headline: ${text}`);
  return v;
}

/** One way of using the cosine `c` of a pair, with or without the rules' decision `rule`, at threshold `t`. */
export interface SemanticVariant {
  name: string;
  decide: (rule: boolean, c: number, t: number) => boolean;
  thresholds: number[];
}

export const SEMANTIC_VARIANTS: SemanticVariant[] = [
  { name: 'cosine >= t alone', decide: (_r, c, t) => c >= t, thresholds: range(0.3, 1, 0.01) },
  { name: 'rules AND cosine >= t', decide: (r, c, t) => r && c >= t, thresholds: range(0.3, 1, 0.01) },
  { name: 'rules OR cosine >= t', decide: (r, c, t) => r || c >= t, thresholds: range(0.3, 1, 0.01) },
];

/** The pair judge of a variant at threshold `t`; `rule` is the rules' decision (isNearDuplicate by default). */
export function semanticJudge(
  v: SemanticVariant,
  t: number,
  vectors: HeadlineVectors,
  rule: (a: string, b: string) => boolean = chosenJudge,
): (a: string, b: string) => boolean {
  return (a, b) => v.decide(rule(a, b), cosine(vectorOf(vectors, a), vectorOf(vectors, b)), t);
}

/**
 * Picks a threshold on dev like tuneOnDev: the highest recall with precision >= goal (the lowest such t on
 * ties), else the best F1. A threshold that finds nothing (recall 0, precision 1 by convention) never counts as
 * meeting the goal.
 */
function pickOnDev(thresholds: number[], scoreAt: (t: number) => PairScore, precisionGoal: number): number {
  let best: { t: number; r: number } | undefined;
  let bestF: { t: number; f: number } | undefined;
  for (const t of thresholds) {
    const s = scoreAt(t);
    const f = s.precision + s.recall ? (2 * s.precision * s.recall) / (s.precision + s.recall) : 0;
    if (s.recall > 0 && s.precision >= precisionGoal && (!best || s.recall > best.r)) best = { t, r: s.recall };
    if (!bestF || f > bestF.f) bestF = { t, f };
  }
  return (best ?? bestF)!.t;
}

export function tuneSemanticOnDev(
  cases: PairCase[],
  v: SemanticVariant,
  vectors: HeadlineVectors,
  precisionGoal: number,
): number {
  return pickOnDev(v.thresholds, (t) => scorePairs(cases, 'dev', semanticJudge(v, t, vectors)), precisionGoal);
}

/**
 * Area under the ROC curve of `score` (duplicates above other pairs), over the pairs of `split` kept by
 * `only`; 0.5 is chance. NaN when one of the two classes is empty.
 */
export function pairAuc(
  cases: PairCase[],
  split: Split,
  score: (c: PairCase) => number,
  only: (c: PairCase) => boolean = () => true,
): number {
  const mine = cases.filter((c) => c.split === split && only(c));
  const dup = mine.filter((c) => c.duplicate).map(score);
  const other = mine.filter((c) => !c.duplicate).map(score);
  if (dup.length === 0 || other.length === 0) return Number.NaN;
  let wins = 0;
  for (const x of dup) for (const y of other) wins += x > y ? 1 : x === y ? 0.5 : 0;
  return wins / (dup.length * other.length);
}

/**
 * The rules with the cosine blended into their score: not guarded, and s = weightedJaccard + w * (cosine - 0.7)
 * at least `t`, and at least `t + (THRESHOLD_NO_ANCHOR - THRESHOLD)` without a shared anchor. w = 0 is the
 * rules with their thresholds re-tuned, the fair baseline of the blend.
 */
export function blendJudge(w: number, t: number, vectors: HeadlineVectors): (a: string, b: string) => boolean {
  return (a, b) => {
    const pa = prepare(a);
    const pb = prepare(b);
    if (guarded(pa, pb)) return false;
    const s = weightedJaccard(pa, pb) + w * (cosine(vectorOf(vectors, a), vectorOf(vectors, b)) - 0.7);
    if (s < t) return false;
    return s >= t + (THRESHOLD_NO_ANCHOR - THRESHOLD) || sharesAnchor(pa, pb);
  };
}

export const BLEND_WEIGHTS = [0, 0.1, 0.2, 0.3, 0.5];
export const BLEND_THRESHOLDS = range(0.15, 0.6, 0.01);

/** Per blend weight, the threshold chosen on dev (same rule as the other variants). */
export function tuneBlendOnDev(cases: PairCase[], w: number, vectors: HeadlineVectors, precisionGoal: number): number {
  // Features once per pair: the judge is called for every threshold.
  const dev = cases.filter((c) => c.split === 'dev');
  const memo = new Map<string, { guarded: boolean; s: number; anchor: boolean }>();
  for (const c of dev) {
    const pa = prepare(c.a);
    const pb = prepare(c.b);
    memo.set(`${c.a}\u0000${c.b}`, {
      guarded: guarded(pa, pb),
      s: weightedJaccard(pa, pb) + w * (cosine(vectorOf(vectors, c.a), vectorOf(vectors, c.b)) - 0.7),
      anchor: sharesAnchor(pa, pb),
    });
  }
  return pickOnDev(
    BLEND_THRESHOLDS,
    (t) =>
      scorePairs(dev, 'dev', (a, b) => {
        const f = memo.get(`${a}\u0000${b}`)!;
        return !f.guarded && f.s >= t && (f.s >= t + (THRESHOLD_NO_ANCHOR - THRESHOLD) || f.anchor);
      }),
    precisionGoal,
  );
}

/**
 * Not a tuning rule, an upper bound: the best precision on `split` over every threshold of `v` whose recall
 * is at least `minRecall`, the threshold chosen by looking at that split's labels.
 */
export function bestPrecisionOn(
  cases: PairCase[],
  split: Split,
  v: SemanticVariant,
  vectors: HeadlineVectors,
  minRecall: number,
): { t: number; score: PairScore } | undefined {
  let best: { t: number; score: PairScore } | undefined;
  for (const t of v.thresholds) {
    const s = scorePairs(cases, split, semanticJudge(v, t, vectors));
    if (s.recall >= minRecall && (!best || s.precision > best.score.precision)) best = { t, score: s };
  }
  return best;
}
