/**
 * The learned half of sentiment (docs/sentiment.md): two multinomial logistic models over hashed features. Pure and
 * deterministic; training and run time make features with these same functions.
 *  - article model: the whole text -> positive / negative / neutral / hawkish / dovish;
 *  - ticker model: the text with the company as `__tgt__`, others `__oth__` -> positive / negative / neutral.
 * Features: stemmed 1-3-grams, negation scope (`not` marks three words), direction × quantity (`loss` + `narrowed`
 * is not `sales` + `fell`), the company's clause and the lexicon's clause scores.
 */
import { firstIndex } from '../domain/sorted.js';
import { stem } from './resources/lexicon.js';

export interface Span {
  start: number;
  end: number;
}

const TOKEN =
  /\$[A-Za-z][A-Za-z.\-]{0,9}|[\p{L}][\p{L}\p{N}]*(?:['’.\-&][\p{L}\p{N}]+)*|\d+(?:[.,]\d+)*%?|[%$€£¥;:,!?]/gu;

const NEGATORS = new Set([
  'not',
  'no',
  'never',
  'without',
  'nor',
  'neither',
  'cannot',
  'unlikely',
  'fail',
  'fails',
  'failed',
  'lack',
  'lacks',
  'lacked',
]);
const CLAUSE_BREAK = new Set([
  ',',
  ';',
  ':',
  'but',
  'while',
  'whereas',
  'although',
  'though',
  'however',
  'despite',
  'after',
  'as',
  'amid',
  'yet',
  'and',
]);

const UP = new Set(
  'rise rose risen rising increase increased increasing grow grew grown growing climb climbed jump jumped surge surged soar soared gain gained higher up widen widened widening expand expanded improve improved improving accelerate accelerated double doubled tripled boost boosted lift lifted raise raised ramp swell swelled balloon ballooned mount mounted spike spiked exceed exceeded top topped beat'
    .split(' ')
    .map(stem),
);
const DOWN = new Set(
  'fall fell fallen falling decrease decreased decreasing decline declined declining drop dropped lower down narrow narrowed narrowing shrink shrank shrunk contract contracted reduce reduced cut cuts slash slashed trim trimmed ease eased easing slow slowed slowing dip dipped slip slipped sink sank plunge plunged tumble tumbled halve halved lessen lessened moderate moderated cool cooled soften softened weaken weakened miss missed'
    .split(' ')
    .map(stem),
);
/** Quantities whose rise is bad news for holders (or for the economy where no company is named). */
const BAD_WHEN_UP = new Set(
  'loss losses cost costs expense expenses debt debts liabilities unemployment jobless layoffs layoff deficit impairment impairments writedown write-down churn inventory inventories provisions provision charges charge delinquencies defaults arrears leverage claims backlog-cancellations headcount-cuts outflows outflow burn'
    .split(' ')
    .map(stem),
);
/** Quantities whose rise is good news. */
const GOOD_WHEN_UP = new Set(
  'sales revenue revenues profit profits earnings eps income margin margins ebit ebitda orders order intake bookings backlog turnover volume volumes dividend dividends output shipments deliveries demand growth cash flow subscribers users traffic guidance outlook forecast payrolls employment jobs gdp surplus inflows inflow rating'
    .split(' ')
    .map(stem),
);
/** Words that speak of prices or inflation (their direction reads as a policy stance). */
const PRICE_WORDS = new Set('inflation prices price cpi pce wages wage core'.split(' ').map(stem));

export interface Tok {
  s: string;
  start: number;
  end: number;
}

function tokens(text: string): Tok[] {
  const out: Tok[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const w = m[0];
    let s: string;
    if (w.startsWith('$') && w.length > 1 && /[A-Za-z]/.test(w[1]!)) s = '<cashtag>';
    else if (/^\d/.test(w)) s = w.endsWith('%') ? '<pct>' : '<num>';
    else s = stem(w.replace(/’/g, "'").toLowerCase());
    out.push({ s, start: m.index, end: m.index + w.length });
  }
  return out;
}

/** The tokens with each span replaced by one marker token. */
function marked(toks: readonly Tok[], target: readonly Span[], others: readonly Span[]): Tok[] {
  const spans = [...target.map((sp) => ({ sp, tg: true })), ...others.map((sp) => ({ sp, tg: false }))].sort(
    (a, b) => a.sp.start - b.sp.start,
  );
  const out: Tok[] = [];
  let k = 0;
  let last: Span | undefined;
  for (const t of toks) {
    while (k < spans.length && spans[k]!.sp.end <= t.start) k++;
    const hit = k < spans.length && t.start >= spans[k]!.sp.start && t.end <= spans[k]!.sp.end ? spans[k]! : undefined;
    if (hit) {
      if (hit.sp !== last) out.push({ s: hit.tg ? '__tgt__' : '__oth__', start: hit.sp.start, end: hit.sp.end });
      last = hit.sp;
      continue;
    }
    last = undefined;
    out.push(t);
  }
  return out;
}

function ngrams(seq: string[], prefix: string, into: string[]): void {
  for (let i = 0; i < seq.length; i++) {
    into.push(`${prefix}1:${seq[i]}`);
    if (i + 1 < seq.length) into.push(`${prefix}2:${seq[i]}_${seq[i + 1]}`);
    if (i + 2 < seq.length) into.push(`${prefix}3:${seq[i]}_${seq[i + 1]}_${seq[i + 2]}`);
  }
}

/** Words after a negator (up to three, within the clause) carry a `!`. */
function negated(toks: Tok[]): string[] {
  const out: string[] = [];
  let left = 0;
  for (const t of toks) {
    if (CLAUSE_BREAK.has(t.s)) left = 0;
    if (NEGATORS.has(t.s) || t.s.endsWith("n't")) {
      left = 3;
      out.push(t.s);
      continue;
    }
    out.push(left > 0 ? `!${t.s}` : t.s);
    if (left > 0) left--;
  }
  return out;
}

/** Good or bad for holders: a good quantity up or a bad one down is `+`; prices are left to the stance. */
function polarity(cls: 'good' | 'bad' | 'price', way: 'up' | 'down'): string {
  if (cls === 'price') return `dqpol:price:${way}`;
  return (cls === 'good') === (way === 'up') ? 'dqpol:+' : 'dqpol:-';
}

/** Direction × quantity: each direction word with the quantity nouns within four words of it. */
function directionQuantity(seq: string[], into: string[]): void {
  for (let i = 0; i < seq.length; i++) {
    const d = seq[i]!;
    const neg = d.startsWith('!');
    const w = neg ? d.slice(1) : d;
    const dir = UP.has(w) ? 1 : DOWN.has(w) ? -1 : 0;
    if (dir === 0) continue;
    const way = (neg ? -dir : dir) > 0 ? 'up' : 'down';
    for (let j = Math.max(0, i - 4); j < Math.min(seq.length, i + 5); j++) {
      if (j === i) continue;
      const n = seq[j]!.replace(/^!/, '');
      if (CLAUSE_BREAK.has(n) && n !== 'and') break;
      if (BAD_WHEN_UP.has(n)) into.push(`dq:bad:${way}`, `dq:${n}:${way}`, polarity('bad', way));
      else if (GOOD_WHEN_UP.has(n)) into.push(`dq:good:${way}`, `dq:${n}:${way}`, polarity('good', way));
      else if (PRICE_WORDS.has(n)) into.push(`dq:price:${way}`, `dq:${n}:${way}`, polarity('price', way));
    }
  }
}

const CURRENCY = String.raw`(?:(?:EUR|USD|SEK|NOK|DKK|GBP|JPY|CHF|CAD|AUD|HKD|INR|CNY|US\$|\$|€|£|¥)\s?)?`;
// A figure starts where no digit, point or comma stands before it: one try per number, never one per digit.
const AMOUNT = String.raw`(?<![\d.,])([-−–]?\d+(?:[.,]\d+)*)\s?(%|per ?cent|pct|mn|bn|m|bln|mln|million|billion|thousand|k)?`;
const Q = `${CURRENCY}${AMOUNT}`;
/** Two figures of one quantity, the newer first or last: `7.1 (5.2)`, `to 7.1 from 5.2`, `from 5.2 to 7.1`. */
const COMPARISONS: { re: RegExp; newer: 1 | 3 }[] = [
  { re: new RegExp(String.raw`${Q}\s?\(\s?${Q}\s?\)`, 'giu'), newer: 1 },
  { re: new RegExp(String.raw`\bto\s${Q},?\s(?:up\s|down\s)?from\s${Q}`, 'giu'), newer: 1 },
  { re: new RegExp(String.raw`\bfrom\s${Q}\s(?:a year (?:earlier|ago)\s|in \w+\s)?to\s${Q}`, 'giu'), newer: 3 },
  {
    re: new RegExp(String.raw`${Q},?\s(?:compared (?:with|to)|against|versus|vs\.?|up from|down from)\s${Q}`, 'giu'),
    newer: 1,
  },
];
const SCALE = new Map<string, number>([
  ['k', 1e3],
  ['thousand', 1e3],
  ['m', 1e6],
  ['mn', 1e6],
  ['mln', 1e6],
  ['million', 1e6],
  ['bn', 1e9],
  ['bln', 1e9],
  ['billion', 1e9],
]);

function amount(figure: string, unit: string | undefined): number {
  let f = figure.replace(/[−–]/, '-');
  f = /^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(f) ? f.replace(/,/g, '') : f.replace(',', '.');
  return Number.parseFloat(f) * (SCALE.get((unit ?? '').toLowerCase()) ?? 1);
}

/** Figure comparisons (newer against older) as direction × quantity, the quantity named before (else after). */
function figureComparisons(text: string, into: string[]): void {
  for (const { re, newer } of COMPARISONS) {
    for (const m of text.matchAll(re)) {
      const older = newer === 1 ? 3 : 1;
      // A figure written without its unit takes the other's (`EUR 7.1 mn (5.2)`).
      const unitA = m[newer + 1] ?? m[older + 1];
      const unitB = m[older + 1] ?? m[newer + 1];
      const a = amount(m[newer]!, unitA);
      const b = amount(m[older]!, unitB);
      if (!Number.isFinite(a) || !Number.isFinite(b) || a === b) continue;
      const way = a > b ? 'up' : 'down';
      into.push(`cmp:${way}`);
      // The quantity is named near the figures: a window either side keeps the cost per match bounded.
      const before = tokens(text.slice(Math.max(0, m.index - 120), m.index))
        .map((t) => t.s)
        .reverse();
      const after = tokens(text.slice(m.index + m[0].length, m.index + m[0].length + 120)).map((t) => t.s);
      const noun =
        before.find((w) => BAD_WHEN_UP.has(w) || GOOD_WHEN_UP.has(w) || PRICE_WORDS.has(w)) ??
        after.find((w) => BAD_WHEN_UP.has(w) || GOOD_WHEN_UP.has(w));
      if (noun === undefined) continue;
      const cls = BAD_WHEN_UP.has(noun) ? 'bad' : GOOD_WHEN_UP.has(noun) ? 'good' : 'price';
      into.push(`dq:${cls}:${way}`, `dq:${noun}:${way}`, `cmp:${cls}:${way}`, polarity(cls, way));
    }
  }
}

/** Rule scores (from the lexicon) given to the model as features. */
export interface RuleScores {
  general: number;
  hawk: number;
  dove: number;
  policy: boolean;
  /** The general score of the clauses after `but` / `however` / `yet` (0 when none). */
  contrast?: number;
}

function ruleFeatures(r: RuleScores, prefix: string, into: string[]): void {
  const sign = (x: number) => (x > 0 ? '+' : x < 0 ? '-' : '0');
  into.push(`${prefix}gen:${sign(r.general)}`, `${prefix}gen:${Math.max(-3, Math.min(3, Math.round(r.general)))}`);
  if (r.policy) into.push(`${prefix}policy`, `${prefix}policy:${sign(r.hawk - r.dove)}`);
  if (r.contrast) into.push(`${prefix}contrast:${sign(r.contrast)}`);
  if (r.hawk > 0) into.push(`${prefix}hawk`);
  if (r.dove > 0) into.push(`${prefix}dove`);
}

/** The article model's features of a text. */
export function articleFeatures(text: string, rules: RuleScores): string[] {
  const seq = negated(tokens(text));
  const out: string[] = ['bias'];
  ngrams(seq, '', out);
  directionQuantity(seq, out);
  figureComparisons(text, out);
  ruleFeatures(rules, 'r:', out);
  return out;
}

/** A text read once for the ticker model: its tokens and the features every company of it shares. */
export interface TickerText {
  toks: Tok[];
  shared: string[];
}

/** The features of the whole line, the same for each company it names (made once per text). */
export function tickerText(text: string, rules: RuleScores): TickerText {
  const toks = tokens(text);
  const seq = negated(toks);
  const shared: string[] = ['bias'];
  ngrams(seq, 'a', shared);
  directionQuantity(seq, shared);
  figureComparisons(text, shared);
  ruleFeatures(rules, 'ra:', shared);
  return { toks, shared };
}

/**
 * A company's own features read the tokens within this many of its first mention, so their cost is bounded (a
 * line of thousands of names has no clause break); a text of up to this many tokens plus one is read whole.
 */
export const TICKER_WINDOW = 64;

/** The tokens within `TICKER_WINDOW` of the first target span, and the spans that reach into them. */
function window(
  toks: Tok[],
  target: readonly Span[],
  others: readonly Span[],
): { toks: Tok[]; target: readonly Span[]; others: readonly Span[] } {
  const first = target.reduce((a, b) => (b.start < a.start ? b : a), target[0]!);
  const from = Math.max(0, firstIndex(toks, (t) => t.end > first.start) - TICKER_WINDOW);
  const to = Math.min(toks.length, firstIndex(toks, (t) => t.start >= first.end) + TICKER_WINDOW);
  if (from === 0 && to === toks.length) return { toks, target, others };
  const start = toks[from]!.start;
  const end = toks[to - 1]!.end;
  const inside = (sp: Span) => sp.start < end && sp.end > start;
  return { toks: toks.slice(from, to), target: target.filter(inside), others: others.filter(inside) };
}

/**
 * One company's own features (`TickerText.shared` goes with them): nearby words, its clause, its clause's scores,
 * read within `TICKER_WINDOW` tokens of its first mention.
 */
export function tickerFeatures(
  t: TickerText,
  target: readonly Span[],
  others: readonly Span[],
  clauseRules: RuleScores,
): string[] {
  const out: string[] = [];
  ruleFeatures(clauseRules, 'rc:', out);
  const near = target.length > 0 ? window(t.toks, target, others) : { toks: t.toks, target, others };
  const m = negated(marked(near.toks, near.target, near.others));
  if (others.length > 0) out.push('others');
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== '__tgt__') continue;
    for (let d = 1; d <= 4; d++) {
      const before = m[i - d];
      const after = m[i + d];
      if (before !== undefined) out.push(`L:${before}`, `L${d}:${before}`);
      if (after !== undefined) out.push(`R:${after}`, `R${d}:${after}`);
    }
    if (i + 2 < m.length) out.push(`R2g:${m[i + 1]}_${m[i + 2]}`);
    if (i >= 2) out.push(`L2g:${m[i - 2]}_${m[i - 1]}`);
  }
  // The company's clause; a comma between two companies (`Apple, Microsoft and Intel lead`) does not end it.
  const company = (x: string | undefined) => x === '__tgt__' || x === '__oth__';
  const clause: string[] = [];
  let current: string[] = [];
  let holds = false;
  m.forEach((s, i) => {
    if (CLAUSE_BREAK.has(s.replace(/^!/, '')) && s !== 'and' && !(company(m[i - 1]) && company(m[i + 1]))) {
      if (holds) clause.push(...current);
      current = [];
      holds = false;
      return;
    }
    if (s === '__tgt__') holds = true;
    current.push(s);
  });
  if (holds) clause.push(...current);
  // The first word after the run of names that starts at the company: the verb a list shares.
  const at = m.indexOf('__tgt__');
  let j = at + 1;
  while (j < m.length && (company(m[j]) || m[j] === ',' || m[j] === 'and' || m[j] === '&')) j++;
  if (at >= 0 && j < m.length) out.push(`RV:${m[j]}`);
  ngrams(clause, 'c', out);
  directionQuantity(clause, out);
  if (at >= 0) {
    // Each word's side of the company (`SL:beat`), and its place among companies (first: subject, last: object).
    for (let i = 0; i < m.length; i++) if (i !== at && !company(m[i])) out.push(`${i < at ? 'SL' : 'SR'}:${m[i]}`);
    const comps = m.flatMap((x, i) => (company(x) ? [i] : []));
    const ord = comps.length === 1 ? 'only' : comps[0] === at ? 'first' : comps.at(-1) === at ? 'last' : 'mid';
    out.push(`ord:${ord}`);
    if (j < m.length) out.push(`ordRV:${ord}:${m[j]}`);
    if (at >= 1) out.push(`ordL1:${ord}:${m[at - 1]}`);
  }
  return out;
}

/** FNV-1a, 32 bits: a feature's bucket. */
export function bucketOf(feature: string, buckets: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < feature.length; i++) {
    h ^= feature.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % buckets;
}

/**
 * A trained model as committed (biases are the `bias` feature's weights), base64 of: per non-zero bucket, the gap
 * from the previous one as a LEB128 varint, then one int8 per label.
 */
export interface SavedModel {
  labels: string[];
  buckets: number;
  /** Per label: the weight of int8 value 1. */
  scale: number[];
  weights: string;
}

export class LinearModel<L extends string> {
  readonly labels: L[];
  private readonly buckets: number;
  /** Bucket-major, kept int8 to save memory (docs/sentiment.md). */
  private readonly w: Int8Array;
  private readonly scale: number[];

  constructor(saved: SavedModel) {
    this.labels = saved.labels as L[];
    this.buckets = saved.buckets;
    const k = this.labels.length;
    const raw = Buffer.from(saved.weights, 'base64');
    this.w = new Int8Array(this.buckets * k);
    this.scale = saved.scale;
    let bucket = -1;
    let i = 0;
    while (i < raw.length) {
      let gap = 0;
      for (let shift = 0; ; shift += 7) {
        if (i >= raw.length) throw new Error('the model weights are malformed');
        const b = raw[i++]!;
        gap += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
      bucket += gap;
      if (bucket >= this.buckets || i + k > raw.length) throw new Error('the model weights are malformed');
      for (let c = 0; c < k; c++) this.w[bucket * k + c] = (raw[i++]! << 24) >> 24;
    }
  }

  /** Each label's score (unnormalised log-probability) for the features, added to `base` when given. */
  scores(features: readonly string[], base?: Float64Array): Float64Array {
    const k = this.labels.length;
    const out = base ? Float64Array.from(base) : new Float64Array(k);
    // Each bucket once, as training reads an example (a set of buckets): a repeated word is no stronger.
    const seen = new Set<number>();
    for (const f of features) {
      const b = bucketOf(f, this.buckets);
      if (seen.has(b)) continue;
      seen.add(b);
      // Each product rounded to float32, so the scores equal those of float32 weights.
      for (let c = 0; c < k; c++) out[c]! += Math.fround(this.w[b * k + c]! * this.scale[c]!);
    }
    return out;
  }

  /** The best-scoring label, leaving out the `excluded` ones; `base`: the scores of features already summed. */
  predict(features: readonly string[], excluded?: ReadonlySet<L>, base?: Float64Array): L {
    const s = this.scores(features, base);
    let best = -1;
    for (let c = 0; c < s.length; c++) {
      if (excluded?.has(this.labels[c]!)) continue;
      if (best < 0 || s[c]! > s[best]!) best = c;
    }
    return this.labels[best]!;
  }
}
