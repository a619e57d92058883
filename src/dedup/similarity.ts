/**
 * The near-duplicate decision: the weighted token similarity reaches the threshold (higher without a shared anchor)
 * and no guard fires. Precision first: merging two stories loses one. Chosen on eval/near-duplicates.jsonl (dev);
 * eval/README.md has the measurements and what each guard cost.
 */
import { stem } from '../enrich/resources/lexicon.js';
import {
  ALIAS_WORDS,
  PLACES,
  addFlag,
  isFigureToken,
  isMarkedToken,
  isSymbolToken,
  numberToken,
  wordToken,
  type NumberValue,
  type Prepared,
} from './normalize.js';

function intersectionSize(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const x of a) if (b.has(x)) n++;
  return n;
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const inter = intersectionSize(a, b);
  return inter / (a.size + b.size - inter);
}

export function overlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  return intersectionSize(a, b) / Math.min(a.size, b.size);
}

/** Tokens that say little about which story it is: they count less in the weighted similarity. */
const LIGHT = new Set(
  `share rise fall quarter annual company market price report plan deal record high low first time after amid above
  below hit since sinc highest lowest expect show post`.split(/\s+/),
);
/** A symbol or a figure tells stories apart best; a LIGHT word hardly at all; any other word counts 1. */
const MARKED_WEIGHT = 2;
const LIGHT_WEIGHT = 0.3;
function weight(token: string): number {
  if (isMarkedToken(token)) return MARKED_WEIGHT;
  return LIGHT.has(token) ? LIGHT_WEIGHT : 1;
}

/**
 * Whether headline `b` names symbol `ticker`: as a symbol, by an alias word or as a bare capitalised symbol (`NVDA`).
 */
function names(b: Prepared, ticker: string): boolean {
  if (b.tickers.has(ticker)) return true;
  const words = ALIAS_WORDS.get(ticker);
  if (!words) return false;
  for (const w of words) if (b.tokens.has(w) || b.caps.has(w)) return true;
  return false;
}

/** Whether headline `b` names one of the symbols of `a` in any of the forms `names` accepts. */
function namesSymbolOf(b: Prepared, a: Prepared): boolean {
  for (const t of a.tickers) if (names(b, t)) return true;
  return false;
}

/** Both name companies and they have none in common. */
export function tickersConflict(a: Prepared, b: Prepared): boolean {
  if (a.tickers.size === 0 || b.tickers.size === 0) return false;
  return !namesSymbolOf(b, a) && !namesSymbolOf(a, b);
}

/**
 * The same figure, or a rounder one for a precise one (`$10 billion` ~ `$10.6bn`); a percentage only as its
 * rounding half up (`4.4%` ~ `4.35%`, `8%` is not `8.5%`): rates and levels are written exactly.
 */
export function sameNumber(x: NumberValue, y: NumberValue): boolean {
  if (x.kind !== y.kind) return false;
  if (x.value === y.value) return true;
  if (x.decimals === y.decimals || x.kind === 'year' || x.kind === 'small') return false;
  if (x.kind === '%') {
    const [rough, precise] = x.decimals < y.decimals ? [x, y] : [y, x];
    // `to zero` is exact (`0%` is not `0.25%`).
    if (rough.value === 0) return false;
    const half = 0.5 * 10 ** -rough.decimals;
    const diff = precise.value - rough.value;
    return diff >= -half - FLOAT_SLACK && diff < half - FLOAT_SLACK;
  }
  const m = Math.max(Math.abs(x.value), Math.abs(y.value));
  return Math.abs(x.value - y.value) <= ROUNDER_FIGURE_TOLERANCE * m;
}
/** Floating-point slack at the exact half of a rounding (`4.35` - `4.4` is not exactly `-0.05`). */
const FLOAT_SLACK = 1e-9;
/** Figures other than percentages: a rounder one within 6.5% of the larger (`$10 billion` ~ `$10.6bn`). */
const ROUNDER_FIGURE_TOLERANCE = 0.065;

/** Different figures of the same kind (`6%` vs `8%`, `25bp` vs `50bp`, 2023 vs 2007): a different story. */
export function numbersConflict(a: Prepared, b: Prepared): boolean {
  const xs = a.numberValues;
  const ys = b.numberValues;
  if (xs.length === 0 || ys.length === 0) return false;
  // Money on one side only, figures on the other: another story (`jump 10% as cloud grows` / `as AWS signs $38 billion
  // deal`).
  const money = (vs: NumberValue[]) => vs.some((v) => v.kind === 'b');
  const measured = (vs: NumberValue[]) => vs.some((v) => v.kind === '%' || v.kind === 'bp' || v.kind === 'n');
  if (money(xs) ? !money(ys) && measured(ys) : money(ys) && measured(xs)) return true;
  // An unmatched figure on each side, of one kind: another story even if another matches (`5% to $10` / `5% to $12`).
  for (const x of xs) {
    if (ys.some((y) => sameNumber(x, y))) continue;
    for (const y of ys) if (y.kind === x.kind && !xs.some((x2) => sameNumber(x2, y))) return true;
  }
  return false;
}

/** One says up (rises, beats, raises, wins, above), the other down (falls, misses, cuts, loses, below). */
function directionConflict(a: Prepared, b: Prepared): boolean {
  return a.lean !== 0 && b.lean !== 0 && a.lean !== b.lean;
}

/**
 * Groups of which a story has one member: different members mean different stories (March vs April, Q3 vs Q4, consumer
 * vs producer, accept vs reject).
 */
export function qualifierConflict(a: Prepared, b: Prepared): boolean {
  for (const [group, xs] of a.flags) {
    const ys = b.flags.get(group);
    if (ys && !meets(xs, ys)) return true;
  }
  return false;
}

/** Whether `word` is an alias word of one of `tickers` (`delta` of DAL). */
function aliasOfAny(tickers: Set<string>, word: string): boolean {
  for (const t of tickers) if (ALIAS_WORDS.get(t)?.has(word)) return true;
  return false;
}

/** Whether `p` names an entity that is no place. */
function hasNamedEntity(p: Prepared): boolean {
  for (const e of p.entities) if (!PLACES.has(e)) return true;
  return false;
}

/** Both name people/products/companies outside the dictionary and none of one's names appears in the other. */
function entitiesConflict(a: Prepared, b: Prepared): boolean {
  if (!hasNamedEntity(a) || !hasNamedEntity(b)) return false;
  for (const e of a.entities)
    if (!PLACES.has(e) && (b.entities.has(e) || b.tokens.has(e) || b.caps.has(e))) return false;
  for (const e of b.entities) if (!PLACES.has(e) && (a.tokens.has(e) || a.caps.has(e))) return false;
  for (const e of b.entities) if (aliasOfAny(a.tickers, e)) return false;
  for (const e of a.entities) if (aliasOfAny(b.tickers, e)) return false;
  return true;
}

/** Words that write the United States (`US`, `U.S.`, `USA`, `United States`, `America`). */
const US_WORDS = new Set(['us', 'u.s', 'usa', 'america', 'united']);

type WordTest = (w: string) => boolean;

/**
 * What `a` names that `b` does not carry in any form (symbols, entities, places), each as a test on a word of
 * `a.words`.
 */
function ownNames(a: Prepared, b: Prepared): WordTest[] {
  const out: WordTest[] = [];
  for (const t of a.tickers) {
    if (names(b, t)) continue;
    const tok = `~${t.toLowerCase()}`;
    out.push((w) => w === tok);
  }
  for (const e of a.entities) {
    // Initials only help matching; a capitalised common word (`Rate` -> `rate`) is no name; places come next.
    if (a.initials.has(e) || !a.tokens.has(e) || a.places.has(e) || PLACES.has(e)) continue;
    if (b.tokens.has(e) || b.caps.has(e) || b.entities.has(e) || aliasOfAny(b.tickers, e)) continue;
    out.push((w) => !isMarkedToken(w) && stem(w) === e);
  }
  for (const pl of a.places) {
    if (b.places.has(pl)) continue;
    out.push(pl === 'us' ? (w) => US_WORDS.has(w) : (w) => wordToken(w) === pl);
  }
  return out;
}

/** The words right before and right after each word of `p` that passes one of `tests`. */
function neighbours(p: Prepared, tests: WordTest[]): [Set<string>, Set<string>] {
  const left = new Set<string>();
  const right = new Set<string>();
  const ws = p.words;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    if (!tests.some((f) => f(w))) continue;
    if (i > 0) left.add(ws[i - 1]!);
    if (i + 1 < ws.length) right.add(ws[i + 1]!);
  }
  return [left, right];
}

/** Whether the two sets have a member in common. */
function meets(x: Set<string>, y: Set<string>): boolean {
  for (const e of x) if (y.has(e)) return true;
  return false;
}

/**
 * Each side names what the other does not, between the same words (`tariff on Brazil` / `on India`); names added
 * elsewhere are none.
 */
export function slotConflict(a: Prepared, b: Prepared): boolean {
  const na = ownNames(a, b);
  if (na.length === 0) return false;
  const nb = ownNames(b, a);
  if (nb.length === 0) return false;
  const [la, ra] = neighbours(a, na);
  const [lb, rb] = neighbours(b, nb);
  return meets(la, lb) || meets(ra, rb);
}

/** What kind of corporate or economic event a headline reports (stemmed, normalised tokens). */
const EVENTS: Record<string, string[]> = {
  results: ['profit', 'revenue', 'estimate', 'beat', 'miss', 'loss', 'margin'],
  outlook: ['outlook'],
  jobs: ['job'],
  deal: ['acquire', 'merger', 'stake', 'split', 'sell', 'bid'],
  recall: ['recal'],
  leadership: ['ceo', 'resign', 'name', 'chairman', 'cfo', 'chair'],
  legal: 'sue probe fine antitrust court appeal settle trial judge doj lawsuit litigation ruling'.split(' '),
  approval: ['approve', 'fda'],
  payout: ['buyback', 'dividend'],
  outage: ['outag', 'cyber', 'breach'],
  launch: ['unveil'],
  invest: ['invest', 'stake', 'fund'],
  output: ['deliveri', 'production', 'output', 'order'],
  writedown: ['charge', 'writedown', 'write-down', 'impairment'],
  contract: ['contract', 'award'],
};
const EVENT_OF = new Map<string, string[]>();
for (const [event, words] of Object.entries(EVENTS)) {
  for (const w of new Set(words.flatMap((x) => [x, stem(x)]))) EVENT_OF.set(w, [...(EVENT_OF.get(w) ?? []), event]);
}
/**
 * Kinds that make a story of their own: present on one side only, the other is a different story (a deal vs a lawsuit
 * to block it).
 */
const STRONG = ['legal', 'leadership', 'recall', 'outage'];

/** Both report a kind of event and no kind in common (a recall vs job cuts at the same company). */
function eventsConflict(a: Prepared, b: Prepared): boolean {
  if (a.events.size === 0 || b.events.size === 0) return false;
  for (const e of STRONG) if (a.events.has(e) !== b.events.has(e)) return true;
  for (const e of a.events) if (b.events.has(e)) return false;
  return true;
}

/** The tokens normalize.ts makes of these words. */
function tokensOf(words: string): string[] {
  return words.split(' ').map((w) => wordToken(w) ?? w);
}

/**
 * Stock indexes by their word (`sp500` is looked up as `sp`; two-word names in INDEX_PAIRS): one story is about one
 * index.
 */
const INDEX_WORDS = new Map<string, string>(
  'sp nasdaq dow ftse dax cac nikkei topix kospi stoxx sensex nifty csi asx tsx russell ibovespa'
    .split(' ')
    .map((w) => [w, w]),
);
const INDEX_PAIRS = new Map<string, string>([
  ['hang seng', 'hangseng'],
  ['shanghai composite', 'shcomp'],
]);

/** Crypto assets named by their symbol (the dictionary maps `Bitcoin`, `Ether` to one). */
const CRYPTO = new Map([
  ['BTC-USD', 'bitcoin'],
  ['ETH-USD', 'ether'],
]);

const UP = new Set(['rise', 'beat', 'raise', 'win', 'high', 'highest', 'above']);
const DOWN = new Set(['fall', 'miss', 'cut', 'lose', 'low', 'lowest', 'below', 'shrink']);
/** Exclusive groups read from tokens (months and quarters are flagged by normalize.ts). */
const EXCLUSIVE: [string, string[]][] = [
  ['price', ['consumer', 'producer', 'import', 'export', 'wholesal']],
  [
    'asset',
    tokensOf(
      'bitcoin ether solana xrp dogecoin gold silver platinum palladium copper aluminium aluminum nickel zinc lithium ore brent wti wheat corn soybean coffee cocoa sugar cotton',
    ),
  ],
  // Who acts: a regulator or an international institution (central banks are places, normalize.ts).
  ['agency', tokensOf('sec ftc doj cftc fca fda epa fcc imf oecd worldbank wto')],
  ['rating', ['~mco', ...tokensOf('fitch')]],
  ['balance', tokensOf('deficit surplus')],
  ['flow', tokensOf('inflow outflow')],
  ['grade', tokensOf('upgrade downgrade affirm')],
  ['weekday', tokensOf('monday tuesday wednesday thursday friday saturday sunday')],
  ['session', tokensOf('opens closes')],
  // Counts of a streak or a repeat (`third straight week` / `fourth`); `first` is left out (`for the first time`).
  ['ordinal', tokensOf('second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth')],
  ['side', ['buy', 'sell']],
  ['half', ['h1', 'h2']],
  ['outcome', ['approve', 'reject']],
  // What was measured (`home sales` / `home prices`: `prices` is read as `inflation`).
  ['metric', ['profit', 'revenue', 'margin', 'inflation', 'valu']],
  ['talks', ['begin', 'scrap']],
];
/**
 * Exclusive groups whose members are classes of words (`explores` and `talks` are one stage of a deal, `agrees`
 * another).
 */
const CLASSES: [string, string, string][] = [
  ['stage', 'early', 'talks explores considers weighs mulls'],
  ['stage', 'agreed', 'agrees clinches seals'],
  ['stage', 'done', 'completes finalizes'],
  ['status', 'halted', 'suspends'],
  ['status', 'resumed', 'resumes reinstates restores'],
  ['sector', 'manufacturing', 'manufacturing factory industrial'],
  ['sector', 'services', 'services'],
  ['sector', 'construction', 'construction'],
  ['housing', 'new', 'newhome'],
  ['housing', 'existing', 'existinghome'],
  ['housing', 'pending', 'pendinghome'],
  // The stage of a case: brought, decided, settled (`Cook sues Trump over removal` / `Cook wins ruling against Trump`).
  ['case', 'filed', 'sues charges charged indicts indicted'],
  ['case', 'decided', 'ruling rules ruled verdict liable guilty convicted acquitted'],
  ['case', 'appeal', 'appeals appealed appellate upholds upheld overturns overturned reverses reversed'],
  ['case', 'settled', 'settles'],
];
/** Token -> the exclusive groups it is a member of, and as which member (one pass over a headline's tokens). */
const GROUP_OF = new Map<string, [string, string][]>();
for (const [group, members] of EXCLUSIVE)
  for (const m of members) GROUP_OF.set(m, [...(GROUP_OF.get(m) ?? []), [group, m]]);
for (const [group, member, words] of CLASSES)
  for (const t of tokensOf(words)) GROUP_OF.set(t, [...(GROUP_OF.get(t) ?? []), [group, member]]);

/** The span a word names (looked up by the headline's words: a Map, so `constructor` is no span). */
const SPAN = new Map([
  ['week', 'week'],
  ['weekly', 'week'],
  ['month', 'month'],
  ['monthly', 'month'],
]);

/** Fills the features the guards read (events, lean, exclusive flags, total weight). */
export function annotate(p: Prepared): Prepared {
  let w = 0;
  for (const t of p.tokens) {
    w += weight(t);
    const ev = EVENT_OF.get(t);
    if (ev) for (const e of ev) p.events.add(e);
  }
  p.weight = w;
  // The direction of the main clause is the headline's own (`Gold falls below $4,000 as dollar firms`).
  let up = false;
  let down = false;
  for (const t of p.main) {
    if (UP.has(t)) up = true;
    else if (DOWN.has(t)) down = true;
    // The main verb of a policy or guidance move: a hold is not a cut (`ECB holds deposit rate at 2%` / `ECB cuts
    // deposit rate to 2%`).
    if (t === 'hold' || t === 'cut' || t === 'raise') addFlag(p.flags, 'action', t);
  }
  p.lean = up === down ? 0 : up ? 1 : -1;
  // The span covered (`weekly gain` / `monthly gain`), read from the words: `week` is a stop word.
  for (const w of p.words) {
    const span = SPAN.get(w);
    if (span !== undefined) addFlag(p.flags, 'span', span);
  }
  // One side refuses or calls off what the other reports (`shareholders reject takeover` / `to buy`).
  p.refusal = p.tokens.has('reject') || p.tokens.has('scrap');
  const ws = p.words;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    // An index written with its number (`sp500`) is looked up without it.
    const name =
      INDEX_WORDS.get(w.replace(/\d+$/, '')) ??
      (i > 0 && (w === 'seng' || w === 'composite') ? INDEX_PAIRS.get(`${ws[i - 1]} ${w}`) : undefined);
    if (name !== undefined) addFlag(p.flags, 'index', name);
  }
  for (const t of p.tickers) {
    const asset = CRYPTO.get(t);
    if (asset !== undefined) addFlag(p.flags, 'asset', asset);
  }
  for (const t of p.tokens) {
    const groups = GROUP_OF.get(t);
    if (groups !== undefined) for (const [group, member] of groups) addFlag(p.flags, group, member);
  }
  return p;
}

/** One headline refuses, blocks or calls off (reject, block, scrap, fail) and the other does not. */
function refusalConflict(a: Prepared, b: Prepared): boolean {
  return a.refusal !== b.refusal;
}

/**
 * Token `x` of `a` and token `y` of `b` say the same: equal, a symbol and its alias word, or the same figure written
 * another way.
 */
function sameToken(x: string, y: string, a: Prepared, b: Prepared): boolean {
  if (x === y) return true;
  const symbolX = isSymbolToken(x);
  if (symbolX !== isSymbolToken(y)) return (symbolX ? aliasesOf(x)?.has(y) : aliasesOf(y)?.has(x)) ?? false;
  if (isFigureToken(x) && isFigureToken(y)) {
    const vx = numbersOf(a).get(x);
    const vy = numbersOf(b).get(y);
    return vx !== undefined && vy !== undefined && sameNumber(vx, vy);
  }
  return false;
}

/** Alias words of a symbol token (`~aapl`), memoised per token (the alignment asks for each pair of tokens). */
const ALIASES_OF_TOKEN = new Map<string, Set<string> | undefined>();
/** Far more than the symbols a day's headlines name: the memo is cleared rather than grown without bound. */
const ALIASES_MEMO_MAX = 10_000;
function aliasesOf(tok: string): Set<string> | undefined {
  if (ALIASES_OF_TOKEN.has(tok)) return ALIASES_OF_TOKEN.get(tok);
  const set = ALIAS_WORDS.get(tok.slice(1).toUpperCase());
  if (ALIASES_OF_TOKEN.size > ALIASES_MEMO_MAX) ALIASES_OF_TOKEN.clear();
  ALIASES_OF_TOKEN.set(tok, set);
  return set;
}
/** A headline's figures by token (`#7.5b` -> its value), computed once per prepared headline. */
const NUMBERS = new WeakMap<Prepared, Map<string, NumberValue>>();
function numbersOf(p: Prepared): Map<string, NumberValue> {
  let m = NUMBERS.get(p);
  if (!m) {
    m = new Map(p.numberValues.map((n) => [`#${numberToken(n)}`, n]));
    NUMBERS.set(p, m);
  }
  return m;
}

/**
 * One headline says something is not so and the other does not (`signals no rush to cut` / `signals September cut`).
 */
function negationConflict(a: Prepared, b: Prepared): boolean {
  return a.negated !== b.negated;
}

/** `2025` / `annual`, or `in 17 years` / `since 2008`: one period written two ways. */
function period(xs: string[], ys: string[]): boolean {
  if (xs.length !== 1) return false;
  const x = xs[0]!;
  if (x === 'annual') return ys.length === 1 && ys[0]!.startsWith('#y');
  return /^#\d+n$/.test(x) && ys.length === 2 && ys[0] === 'sinc' && ys[1]!.startsWith('#y');
}
/** A slot whose two sides are one thing written two ways (see `period`). */
function explained(s: Slot): boolean {
  return period(s.a, s.b) || period(s.b, s.a);
}

/** Shared tokens needed to call two headlines one template. */
const TEMPLATE_MIN_SHARED = 2;
/**
 * The most content words on either side of the one changed slot (`natural gas` / `oil`, `Mexican peso` / `Brazilian
 * real`); with two slots, one word each.
 */
const ONE_SLOT_MAX = 2;

/**
 * One template with one or two words changed in the main clause (`Sterling rises to two-week high` / `Euro rises
 * ...`); a rewording changes more places, adds words, or only the reason after it. Forms of one thing are folded
 * first (normalize.ts, `period`), so a slot left is a real difference: the guard for kinds no list knows.
 */
export function oneSlotConflict(a: Prepared, b: Prepared): boolean {
  const d = templateDiff(a, b);
  if (d.inserted !== 0 || d.shared < TEMPLATE_MIN_SHARED) return false;
  if (d.substitutions === 0 || d.substitutions > 2 || d.slot > (d.substitutions === 1 ? ONE_SLOT_MAX : 1)) return false;
  // Two actors swapped between two slots are a reordering (`Honda ... Nissan` / `Nissan ... Honda`): roleConflict's
  // question.
  if (d.substitutions === 2) {
    const [x, y] = [d.slots[0]!.a[0]!, d.slots[0]!.b[0]!];
    if (x === d.slots[1]!.b[0] && y === d.slots[1]!.a[0] && isActor(a, x) && isActor(a, y)) return false;
  }
  // After the main clause only a one-word swap counts (`as China bans its chips` / `probes`): a longer one is a
  // rewording.
  return d.slots.some(
    (s) =>
      !explained(s) && ((s.startA < a.mainLength && s.startB < b.mainLength) || (s.a.length === 1 && s.b.length === 1)),
  );
}

/**
 * The actors a headline names, in order, each at its first word: symbols, places (countries, central banks), named
 * entities.
 */
interface Actor {
  id: string;
  /** Index of its first word in `words`. */
  at: number;
}
const ACTORS = new WeakMap<Prepared, Actor[]>();
function actors(p: Prepared): Actor[] {
  let out = ACTORS.get(p);
  if (!out) {
    out = findActors(p);
    ACTORS.set(p, out);
  }
  return out;
}
function findActors(p: Prepared): Actor[] {
  const out: Actor[] = [];
  const seen = new Set<string>();
  const ws = p.words;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    let id: string | undefined;
    if (isSymbolToken(w)) id = w;
    else if (isFigureToken(w)) continue;
    else if (US_WORDS.has(w) && p.places.has('us')) id = 'us';
    else {
      const t = wordToken(w);
      if (t !== null && p.places.has(t)) id = t;
      else if (t !== null && p.entities.has(stem(w)) && !PLACES.has(stem(w))) id = stem(w);
    }
    if (id === undefined || seen.has(id)) continue;
    seen.add(id);
    out.push({ id, at: i });
  }
  return out;
}

/** Whether token `t` of `p` names an actor (a symbol, a place, a named entity); a currency or a commodity is none. */
function isActor(p: Prepared, t: string): boolean {
  return isSymbolToken(t) || p.places.has(t) || p.entities.has(t);
}

/** Relations that hold both ways (normalised tokens): two actors met, talk, merge, partner, call or face each other. */
const SYMMETRIC = new Set(
  'meet talk merger merg partner partnership call summit tie allianc joint vs versus truce'.split(' '),
);

function between(p: Prepared, from: number, to: number): string {
  const out: string[] = [];
  for (let i = from + 1; i < to; i++) {
    const w = p.words[i]!;
    const t = isFigureToken(w) ? w : wordToken(w);
    if (t !== null) out.push(t);
  }
  return out.join(' ');
}

/**
 * The same two actors, roles swapped (`Microsoft sues OpenAI` / `OpenAI sues Microsoft`); a passive or a pair (`US,
 * China agree`) is none.
 */
export function roleConflict(a: Prepared, b: Prepared): boolean {
  const xa = actors(a);
  if (xa.length < 2) return false;
  const xb = actors(b);
  if (xb.length < 2) return false;
  const inB = new Map(xb.map((x) => [x.id, x.at]));
  const common = xa.filter((x) => inB.has(x.id));
  if (common.length < 2) return false;
  const [first, second] = [common[0]!, common[1]!];
  const bFirst = inB.get(first.id)!;
  const bSecond = inB.get(second.id)!;
  if (bFirst < bSecond) return false;
  if (a.words.includes('by') || b.words.includes('by')) return false;
  // The same words between them: a rewording that turns the sentence round changes them (`EU fines Apple` / `Apple hit
  // with EU fine`).
  const link = between(a, first.at, second.at);
  if (link === '' || link !== between(b, bSecond, bFirst)) return false;
  // A relation that goes both ways is no swap (`Trump meets Xi` / `Xi meets Trump`, `in merger talks with`).
  return !link.split(' ').some((t) => SYMMETRIC.has(t));
}

/** One announces the event as expected (`ECB expected to cut rates`), the other reports it (`ECB cuts rates`). */
export function previewConflict(a: Prepared, b: Prepared): boolean {
  return a.flags.has('mode') !== b.flags.has('mode');
}

const METRICS = new Set(['revenue', 'profit', 'margin']);
/** Whether the main clause speaks of a forecast of a results figure (`revenue forecast`, `forecasts Q3 revenue`). */
function forecastOfMetric(p: Prepared): boolean {
  const s = p.sequence;
  for (let i = 0; i < p.mainLength; i++) {
    if (s[i] !== 'outlook') continue;
    if (i > 0 && METRICS.has(s[i - 1]!)) return true;
    if (METRICS.has(s[i + 1] ?? '') || (s[i + 1] === 'quarter' && METRICS.has(s[i + 2] ?? ''))) return true;
  }
  return false;
}
/** Whether the main clause names a results figure (revenue, profit, margin). */
function speaksOfMetric(p: Prepared): boolean {
  for (const t of p.main) if (METRICS.has(t)) return true;
  return false;
}
/**
 * A forecast of a figure against the figure itself (`Nvidia revenue forecast beats estimates` / `Nvidia revenue beats
 * estimates`).
 */
export function forecastConflict(a: Prepared, b: Prepared): boolean {
  if (!speaksOfMetric(a) || !speaksOfMetric(b)) return false;
  const fa = forecastOfMetric(a);
  const fb = forecastOfMetric(b);
  return fa ? !fb && !b.main.includes('outlook') : fb && !a.main.includes('outlook');
}

/**
 * The company a headline is about: a symbol among its first three words (`Coca-Cola raises ...`, `Caterpillar Q2 profit
 * ...`).
 */
function subjectOf(p: Prepared): string | undefined {
  const n = Math.min(3, p.words.length);
  for (let i = 0; i < n; i++) {
    const w = p.words[i]!;
    if (!isSymbolToken(w)) continue;
    if (DESCRIBES.has(p.words[i + 1] ?? '')) continue;
    return w.slice(1).toUpperCase();
  }
  return undefined;
}
/**
 * Words after a company that make it a description of the next name (`Apple supplier Foxconn`, `Nvidia-backed
 * CoreWeave`).
 */
const DESCRIBES = new Set(
  'supplier suppliers partner partners parent owner rival rivals customer customers client clients backer backed owned funded investor investors maker peer unit'.split(
    ' ',
  ),
);
/** Whether `b` names symbol `ticker` in any form, also as a plain word (`Arm` read as `unit`). */
function namesAnyhow(b: Prepared, ticker: string): boolean {
  if (names(b, ticker)) return true;
  const words = ALIAS_WORDS.get(ticker);
  return words !== undefined && b.words.some((w) => words.has(w));
}
/**
 * The company one headline is about is not named in the other (`Coca-Cola raises annual sales forecast` / `PepsiCo
 * raises ...`).
 */
export function subjectConflict(a: Prepared, b: Prepared): boolean {
  const sa = subjectOf(a);
  if (sa !== undefined && !namesAnyhow(b, sa)) return true;
  const sb = subjectOf(b);
  return sb !== undefined && !namesAnyhow(a, sb);
}

export function guarded(a: Prepared, b: Prepared): boolean {
  return (
    refusalConflict(a, b) ||
    negationConflict(a, b) ||
    previewConflict(a, b) ||
    forecastConflict(a, b) ||
    tickersConflict(a, b) ||
    subjectConflict(a, b) ||
    numbersConflict(a, b) ||
    directionConflict(a, b) ||
    qualifierConflict(a, b) ||
    eventsConflict(a, b) ||
    entitiesConflict(a, b) ||
    slotConflict(a, b) ||
    roleConflict(a, b) ||
    oneSlotConflict(a, b)
  );
}

/** Longest-common-subsequence alignment of the two token sequences: the matched index pairs, in order. */
function align(a: Prepared, b: Prepared): [number, number][] {
  const xs = a.sequence;
  const ys = b.sequence;
  const n = xs.length;
  const m = ys.length;
  const w = m + 1;
  const t = new Uint16Array((n + 1) * w);
  const eq = new Uint8Array(n * m);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const same = sameToken(xs[i]!, ys[j]!, a, b);
      if (same) eq[i * m + j] = 1;
      t[i * w + j] = same ? t[(i + 1) * w + j + 1]! + 1 : Math.max(t[(i + 1) * w + j]!, t[i * w + j + 1]!);
    }
  }
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (eq[i * m + j] === 1) {
      out.push([i, j]);
      i++;
      j++;
    } else if (t[(i + 1) * w + j]! >= t[i * w + j + 1]!) i++;
    else j++;
  }
  return out;
}

/** A place where both headlines have words the other lacks: their tokens and where they start in each sequence. */
export interface Slot {
  a: string[];
  b: string[];
  startA: number;
  startB: number;
}

/**
 * How two token sequences differ: slots where both have other words (and the widest), how many words only one side
 * has, how many are shared.
 */
export function templateDiff(
  a: Prepared,
  b: Prepared,
): { substitutions: number; inserted: number; shared: number; slot: number; slots: Slot[] } {
  const pairs = align(a, b);
  let inserted = 0;
  let slot = 0;
  const slots: Slot[] = [];
  let pi = -1;
  let pj = -1;
  for (const [i, j] of [...pairs, [a.sequence.length, b.sequence.length] as [number, number]]) {
    const da = i - pi - 1;
    const db = j - pj - 1;
    if (da > 0 && db > 0) {
      slot = Math.max(slot, da, db);
      slots.push({ a: a.sequence.slice(pi + 1, i), b: b.sequence.slice(pj + 1, j), startA: pi + 1, startB: pj + 1 });
    } else inserted += da + db;
    pi = i;
    pj = j;
  }
  return { substitutions: slots.length, inserted, shared: pairs.length, slot, slots };
}

/**
 * The token of `b` that stands for token `x` of `a` when not written the same way: a symbol by its alias word, a figure
 * rounded.
 */
function counterpart(x: string, a: Prepared, b: Prepared): string | undefined {
  if (isSymbolToken(x)) {
    for (const t of a.tickers) {
      if (`~${t.toLowerCase()}` !== x) continue;
      for (const w of ALIAS_WORDS.get(t) ?? []) if (b.tokens.has(w)) return w;
    }
    return undefined;
  }
  const v = numbersOf(a).get(x);
  if (v) for (const y of b.numberValues) if (sameNumber(v, y)) return `#${numberToken(y)}`;
  return undefined;
}

/**
 * Jaccard with token weights (symbols and figures 2, generic words 0.3); a symbol matches its alias word, a figure its
 * rounding.
 */
export function weightedJaccard(a: Prepared, b: Prepared): number {
  let exact = 0;
  let fuzzy = 0;
  // Weight of the `b` side (or `a` side) of fuzzy matches, counted once in the union.
  let merged = 0;
  for (const x of a.tokens) {
    if (b.tokens.has(x)) {
      exact += weight(x);
      continue;
    }
    if (!isMarkedToken(x)) continue;
    const y = counterpart(x, a, b);
    if (y !== undefined && !a.tokens.has(y)) {
      fuzzy += weight(x);
      merged += weight(y);
    }
  }
  // Alias words of `a` standing for symbols of `b` (`Delta` for DAL).
  for (const t of b.tickers) {
    if (a.tickers.has(t)) continue;
    for (const w of ALIAS_WORDS.get(t) ?? []) {
      if (a.tokens.has(w) && !b.tokens.has(w)) {
        fuzzy += MARKED_WEIGHT;
        merged += weight(w);
        break;
      }
    }
  }
  const union = a.weight + b.weight - exact - merged;
  return union <= 0 ? 1 : Math.min(1, (exact + fuzzy) / union);
}

/** Whether the two share an anchor: a symbol (or its alias), a figure, or a named entity. */
export function sharesAnchor(a: Prepared, b: Prepared): boolean {
  if (namesSymbolOf(b, a) || namesSymbolOf(a, b)) return true;
  for (const x of a.numberValues) {
    if (x.kind === 'small' || x.kind === 'year') continue;
    for (const y of b.numberValues) if (sameNumber(x, y)) return true;
  }
  return carriesNameOf(a, b) || carriesNameOf(b, a);
}
/** Whether `b` has a word that `a` names: a named entity (places aside) or a word in capitals. */
function carriesNameOf(a: Prepared, b: Prepared): boolean {
  for (const e of a.entities) if (!PLACES.has(e) && b.tokens.has(e)) return true;
  return meets(a.caps, b.tokens);
}

/** Chosen on the dev pairs of eval/near-duplicates.jsonl (scripts/eval-enrich.ts). */
export const THRESHOLD = 0.36;
/** Without a shared anchor. */
export const THRESHOLD_NO_ANCHOR = 0.45;

export function decide(a: Prepared, b: Prepared, threshold = THRESHOLD, withoutAnchor = THRESHOLD_NO_ANCHOR): boolean {
  // The score first: most candidate pairs fall below it, and the guards (an alignment among them) cost more.
  const s = weightedJaccard(a, b);
  if (s < threshold) return false;
  if (s < withoutAnchor && !sharesAnchor(a, b)) return false;
  return !guarded(a, b);
}
