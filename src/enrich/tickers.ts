/**
 * Ticker mentions in a headline, precision first:
 *  - cashtags: `$AAPL`, `$BRK.B`, not a currency (`$US`); lower case (`$amzn`) only for a directory symbol;
 *  - exchange-prefixed symbols: `NASDAQ:AAPL` -> `AAPL`, `LON:VOD` -> `VOD.L`, `LON:BT.A` -> `BT-A.L`;
 *  - directory names (directory.ts) written as names: capitalised as the alias is, not glued to a lower-case
 *    compound (`Meta-analysis`), not vetoed by a neighbour (`Apple pie`, `Big Apple`). A common-word name
 *    (`?Target`) also needs corporate context (`Target's`, `Ford shares`, `retailer Target`, or its symbol given)
 *    and must not follow a capitalised word (`Harrison Ford`); so do short aliases (`BP`) in a capitals headline.
 */
import { articleRules } from '../contract/index.js';
import { COMPANIES, NOT_FOLLOWED_BY, NOT_PRECEDED_BY } from './directory.js';
import { GIVEN_NAMES, TITLES } from './resources/people.js';

export interface Mention {
  ticker: string;
  /** UTF-16 offsets of the mention in the text. */
  start: number;
  end: number;
}

export interface Alias {
  ticker: string;
  name: string;
  tokens: string[];
  /** Per token: must start with a capital / must be all capitals in the text. */
  capital: boolean[];
  allCaps: boolean[];
  common: boolean;
  short: boolean;
  key: string;
}

interface Token {
  norm: string;
  raw: string;
  start: number;
  end: number;
}

const TOKEN = /[\p{L}\p{N}]+(?:[&.+][\p{L}\p{N}]+|'(?!s(?![\p{L}\p{N}]))[\p{L}\p{N}]+)*|&/gu;

function fold(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

function tokenize(text: string): Token[] {
  const t = text.replace(/[’‘`]/g, "'");
  const out: Token[] = [];
  for (const m of t.matchAll(TOKEN)) {
    // The possessive `'s` is not a word of its own (`McDonald's` is the name `McDonald`).
    if ((m[0] === 's' || m[0] === 'S') && t[m.index - 1] === "'") continue;
    // A lone `&` reads as `and`: `Kulicke & Soffa` and `Kulicke and Soffa` are one name.
    out.push({ norm: m[0] === '&' ? 'and' : fold(m[0]), raw: m[0], start: m.index, end: m.index + m[0].length });
  }
  return out;
}

const isUpper = (c: string) => c !== c.toLowerCase() && c === c.toUpperCase();
const startsUpper = (s: string) => isUpper(s[0]!) || /\p{N}/u.test(s[0]!);
const allCapitals = (s: string) => !/\p{Ll}/u.test(s);

interface TrieNode {
  next: Map<string, TrieNode>;
  ends: Alias[];
}

/** A directory ready for matching: a word trie, so a word's cost does not grow with the names sharing it. */
export interface NameIndex {
  root: TrieNode;
  /** Each symbol's names as token keys (`quanta services`), to tell its own longer name from another company's. */
  keysOf: Map<string, string[]>;
  companies: ReadonlyMap<string, string>;
}

/** The index of a directory (symbol -> names separated by `|`, `?` before a common-word name). */
export function nameIndex(companies: ReadonlyMap<string, string>): NameIndex {
  const root: TrieNode = { next: new Map(), ends: [] };
  const keysOf = new Map<string, string[]>();
  for (const [ticker, names] of companies) {
    for (const raw of names.split('|')) {
      const common = raw.startsWith('?');
      const name = common ? raw.slice(1) : raw;
      const toks = tokenize(name);
      if (toks.length === 0) continue;
      const alias: Alias = {
        ticker,
        name,
        tokens: toks.map((t) => t.norm),
        capital: toks.map((t) => startsUpper(t.raw)),
        allCaps: toks.map((t) => t.raw.length >= 2 && /\p{L}/u.test(t.raw) && allCapitals(t.raw)),
        common,
        short: toks.length === 1 && toks[0]!.raw.length <= 3,
        key: toks.map((t) => t.norm).join(' '),
      };
      let node = root;
      for (const word of alias.tokens) {
        let child = node.next.get(word);
        if (!child) node.next.set(word, (child = { next: new Map(), ends: [] }));
        node = child;
      }
      node.ends.push(alias);
      keysOf.set(ticker, [...(keysOf.get(ticker) ?? []), alias.key]);
    }
  }
  return { root, keysOf, companies };
}

/** Indexed on first match, not at load: a command that never reads a headline does not pay for it. */
let directory: NameIndex | undefined;
const directoryIndex = (): NameIndex => (directory ??= nameIndex(COMPANIES));

const notFollowedBy = new Map([...NOT_FOLLOWED_BY].map(([k, v]) => [k, new Set(v)]));
const notPrecededBy = new Map([...NOT_PRECEDED_BY].map(([k, v]) => [k, new Set(v)]));

/** Words right after a common-word name that show it is the company (`Ford shares`, `Target cuts`). */
const CORPORATE_AFTER = new Set(
  `inc corp corporation co company plc ltd ag sa se nv group holdings shares share stock stocks ceo cfo chief chairman
  executive executives boss earnings profit profits revenue revenues sales results quarterly outlook guidance forecast
  forecasts dividend buyback stake shareholders investors bonds workers employees staff stores store said says to will
  plans plan beats beat misses missed tops topped raises raised cuts cut lowers lowered reports reported posts posted
  announces announced recalls recalled sues sued hires names appoints agrees agreed acquires acquired buys bought sells
  sold rallies rallied jumps jumped falls fell slides slid tumbles tumbled soars soared surges surged drops dropped rises
  rose gains gained sinks sank slumps slumped warns warned expects sees lifts lifted trims trimmed slashes slashed
  boosts boosted launches launched unveils unveiled shutters closes closed opens layoffs jobs deal merger ipo rating
  upgrade upgraded downgrade downgraded q1 q2 q3 q4 fy quarter first second third fourth full-year annual margin margins
  card cards network payments bank motor motors energy oil lng refinery refining retail retailer chain cruise cruises
  stockholders board executive union strike strikers is has had was`.split(/\s+/),
);
/** Nouns right before a common-word name that show it is the company (`retailer Target`). */
const CORPORATE_BEFORE = new Set(
  `retailer retailers carmaker automaker automakers giant major rival rivals firm company group lender bank insurer
  network processor maker producer supplier shares stock chain operator investors owner peer peers brand`.split(/\s+/),
);
/** Words making a name another company's (`Tata Steel`) unless its own; no bank words: `Barclays Bank` is Barclays. */
const COMPANY_NOUNS = new Set(
  `computer computers steel motors motor power energy electric electronics chemical chemicals pharma pharmaceutical
  pharmaceuticals airlines airways foods brewing brewery mining oil gas telecom
  communications properties land realty renewables semiconductor semiconductors industries shipping marine logistics
  healthcare technologies consumer entertainment resorts hotels infrastructure cement paper textiles auto`.split(/\s+/),
);

/** Second word of a hyphenated compound that keeps the name (`Microsoft-backed`, `Tesla-owned`). */
const COMPOUND_OK = new Set([
  'backed',
  'owned',
  'led',
  'made',
  'based',
  'linked',
  'related',
  'branded',
  'built',
  'funded',
  'controlled',
  'listed',
]);

/** Dollar prefixes naming a currency, not a company (`$US`, `$NZ`); `$C`, `$T`, `$M` are Citigroup, AT&T, Macy's. */
const CURRENCIES = new Set([
  'US',
  'USD',
  'AUD',
  'CAD',
  'NZD',
  'HKD',
  'SGD',
  'EUR',
  'GBP',
  'JPY',
  'CHF',
  'CNY',
  'A',
  'NZ',
  'HK',
]);
const CASHTAG = /(?<![\p{L}\p{N}$])\$([A-Z]{1,6}(?:[.\-][A-Z]{1,3})?)(?![\p{L}\p{N}]|[.\-][A-Za-z])/gu;
const LOWER_CASHTAG = /(?<![\p{L}\p{N}$])\$([a-z]{2,6})(?![\p{L}\p{N}]|[.\-][A-Za-z])/gu;
const CRYPTO_CASHTAGS = new Map([
  ['BTC', 'BTC-USD'],
  ['ETH', 'ETH-USD'],
]);

/** Exchange prefix (Google Finance style) -> the symbol's home-market suffix ('' for US venues). */
const EXCHANGES = new Map(
  Object.entries({
    NASDAQ: '',
    NYSE: '',
    NYSEARCA: '',
    NYSEAMERICAN: '',
    AMEX: '',
    ARCA: '',
    BATS: '',
    CBOE: '',
    OTC: '',
    OTCMKTS: '',
    LON: '.L',
    LSE: '.L',
    ETR: '.DE',
    XETRA: '.DE',
    FRA: '.DE',
    EPA: '.PA',
    AMS: '.AS',
    EBR: '.BR',
    ELI: '.LS',
    BIT: '.MI',
    BME: '.MC',
    SWX: '.SW',
    SIX: '.SW',
    VTX: '.SW',
    STO: '.ST',
    HEL: '.HE',
    CPH: '.CO',
    OSL: '.OL',
    VIE: '.VI',
    ISE: '.IR',
    WSE: '.WA',
    TSX: '.TO',
    TSE: '.TO',
    TSXV: '.V',
    CVE: '.V',
    ASX: '.AX',
    NSE: '.NS',
    BOM: '.BO',
    HKG: '.HK',
    HKEX: '.HK',
    SEHK: '.HK',
    TYO: '.T',
    KRX: '.KS',
    SGX: '.SI',
    SHA: '.SS',
    SHE: '.SZ',
  }),
);
const EXCHANGE =
  /(?<![\p{L}\p{N}])([A-Za-z]{3,12})\s?:\s?([A-Z0-9]{1,6}(?:\.[A-Z0-9]{1,3})?)(?![\p{L}\p{N}]|\.[A-Za-z0-9])/gu;

function exchangeSymbol(exchange: string, symbol: string): string | undefined {
  const suffix = EXCHANGES.get(exchange.toUpperCase());
  if (suffix === undefined) return undefined;
  if (!/[A-Z]/.test(symbol) && !['.HK', '.T', '.KS', '.SS', '.SZ', '.SI'].includes(suffix)) return undefined;
  if (suffix === '') return symbol;
  const local = suffix === '.HK' && /^\d+$/.test(symbol) ? symbol.padStart(4, '0') : symbol.replace(/\./g, '-');
  return `${local}${suffix}`;
}

/** Whether the text is shouted (no lower-case letters): then case says little about names. */
function isShouting(text: string): boolean {
  const letters = text.replace(/[^\p{L}]/gu, '');
  if (letters.length < 8) return false;
  const lower = letters.replace(/[^\p{Ll}]/gu, '').length;
  return lower / letters.length < 0.1;
}

/** Whether most words of four or more letters are capitalised (`Ford Shares Fall After Recall`). */
function isTitleCase(tokens: Token[]): boolean {
  const words = tokens.filter((t) => t.raw.length >= 4 && /^\p{L}/u.test(t.raw));
  return words.length >= 3 && words.filter((t) => startsUpper(t.raw)).length / words.length >= 0.8;
}

/**
 * Between a name's words: spaces, hyphens, one slash (`Cullen/Frost`), the full stop of an initial (`J.B. Hunt`), `'s`
 * (`St James's Place`).
 */
function separatorOk(text: string, from: number, to: number, previous: string): boolean {
  const gap = text.slice(from, to);
  if (/^[\s\-]+$/.test(gap) || gap === '/') return true;
  if (/^\.\s+$/.test(gap)) return /^\p{L}(?:\.\p{L})*$/u.test(previous) || /^(?:st|mt|ft)$/i.test(previous);
  return /^'s\s+$/.test(gap);
}

/** A candidate the matcher weighed: where, what it would be, and the rule that kept or refused it. */
export interface Candidate extends Mention {
  text: string;
  via: 'cashtag' | 'exchange symbol' | 'name';
  /** The directory name that matched (for `name`). */
  alias?: string;
  kept: boolean;
  rule: string;
}

/** All mentions, in text order (a symbol may appear more than once). */
export function findMentions(text: string): Mention[] {
  return scan(text);
}

/** The mentions an article may carry: those whose symbol the contract's ticker pattern allows. */
export function articleMentions(text: string): Mention[] {
  return scan(text).filter((m) => articleRules.tickerPattern.test(m.ticker));
}

/** Every candidate the matcher weighed, kept or refused, with its rule (`fns tickers lookup`). */
export function explainMentions(text: string): Candidate[] {
  const out: Candidate[] = [];
  scan(text, out);
  return out.sort((a, b) => a.start - b.start);
}

/** The mentions of `text` against another directory than the service's (benchmarks of the matcher's cost). */
export function findMentionsIn(index: NameIndex, text: string): Mention[] {
  return scan(text, undefined, index);
}

/** Records a candidate: a kept one becomes a mention; every one is told to `explainMentions`. */
type Note = (c: Omit<Candidate, 'text'>) => void;

function scan(text: string, weighed?: Candidate[], dir: NameIndex = directoryIndex()): Mention[] {
  const mentions: Mention[] = [];
  const note: Note = (c) => {
    if (c.kept) mentions.push({ ticker: c.ticker, start: c.start, end: c.end });
    weighed?.push({ ...c, text: text.slice(c.start, c.end) });
  };
  const explicit = explicitSymbols(text, dir, note);
  // The words of a cashtag or exchange symbol are read as that symbol only (`$SONY` is not also `Sony`).
  const symbolSpans = mentions.map((m) => [m.start, m.end] as const);
  directoryNames(text, dir, explicit, symbolSpans, note);
  return mentions.sort((a, b) => a.start - b.start);
}

/** Cashtags and exchange-prefixed symbols; returns the symbols the text gives explicitly. */
function explicitSymbols(text: string, dir: NameIndex, note: Note): Set<string> {
  const explicit = new Set<string>();
  const at = (m: RegExpMatchArray) => ({ start: m.index!, end: m.index! + m[0].length });
  for (const m of text.matchAll(CASHTAG)) {
    const sym = m[1]!;
    if (CURRENCIES.has(sym)) {
      note({ ticker: sym, ...at(m), via: 'cashtag', kept: false, rule: 'a currency code, not a ticker' });
      continue;
    }
    const ticker = CRYPTO_CASHTAGS.get(sym) ?? sym;
    note({ ticker, ...at(m), via: 'cashtag', kept: true, rule: 'a capital cashtag' });
    explicit.add(ticker);
  }
  for (const m of text.matchAll(LOWER_CASHTAG)) {
    const sym = m[1]!.toUpperCase();
    const ticker = CRYPTO_CASHTAGS.get(sym) ?? (dir.companies.has(sym) ? sym : undefined);
    if (ticker === undefined) {
      const rule = 'a lower-case cashtag counts only for a symbol of the directory';
      note({ ticker: sym, ...at(m), via: 'cashtag', kept: false, rule });
      continue;
    }
    note({ ticker, ...at(m), via: 'cashtag', kept: true, rule: 'a lower-case cashtag of a directory symbol' });
    explicit.add(ticker);
  }
  for (const m of text.matchAll(EXCHANGE)) {
    const ticker = exchangeSymbol(m[1]!, m[2]!);
    if (ticker === undefined) continue;
    note({ ticker, ...at(m), via: 'exchange symbol', kept: true, rule: 'an exchange-prefixed symbol' });
    explicit.add(ticker);
  }
  return explicit;
}

function directoryNames(
  text: string,
  dir: NameIndex,
  explicit: Set<string>,
  symbolSpans: readonly (readonly [number, number])[],
  note: Note,
): void {
  const shouting = isShouting(text);
  const tokens = tokenize(text);
  const titleCase = isTitleCase(tokens);
  const norm = text.replace(/[’‘`]/g, "'");
  for (let i = 0; i < tokens.length; i++) {
    const at = tokens[i]!.start;
    if (!dir.root.next.has(tokens[i]!.norm) || symbolSpans.some(([a, b]) => at >= a && at < b)) continue;
    for (const alias of namesFrom(tokens, i, norm, dir)) {
      const n = alias.tokens.length;
      const span = { ticker: alias.ticker, start: tokens[i]!.start, end: tokens[i + n - 1]!.end, via: 'name' as const };
      const verdict = writtenAsName(alias, tokens, i, shouting)
        ? accepted(alias, tokens, i, n, norm, shouting, titleCase, explicit, dir)
        : refused('not written as a name (capitals)');
      note({ ...span, alias: alias.name, kept: verdict.ok, rule: verdict.rule });
      if (verdict.ok) {
        i += n - 1;
        break;
      }
    }
  }
}

/** The names the words from `i` spell, longest first. */
function namesFrom(tokens: Token[], i: number, norm: string, dir: NameIndex): Alias[] {
  const names: Alias[] = [];
  let node: TrieNode | undefined = dir.root;
  for (let k = 0; i + k < tokens.length; k++) {
    if (k > 0 && !separatorOk(norm, tokens[i + k - 1]!.end, tokens[i + k]!.start, tokens[i + k - 1]!.raw)) break;
    node = node.next.get(tokens[i + k]!.norm);
    if (!node) break;
    names.unshift(...node.ends);
  }
  return names;
}

/** Each word capitalised (or in capitals) as the directory writes it; a shouted text says nothing of case. */
function writtenAsName(alias: Alias, tokens: Token[], i: number, shouting: boolean): boolean {
  if (shouting) return true;
  return alias.tokens.every((_, k) => {
    const raw = tokens[i + k]!.raw;
    return !(alias.capital[k] && !startsUpper(raw)) && !(alias.allCaps[k] && !allCapitals(raw));
  });
}

type Verdict = { ok: boolean; rule: string };
const kept = (rule: string): Verdict => ({ ok: true, rule });
const refused = (rule: string): Verdict => ({ ok: false, rule });

interface Context {
  alias: Alias;
  tokens: Token[];
  i: number;
  first: Token;
  last: Token;
  prev: Token | undefined;
  /** The words right before and after it, when only spaces or hyphens stand between. */
  prevAdjacent: Token | undefined;
  nextAdjacent: Token | undefined;
  /** The word after the name, or after its possessive (`Pandora's box`). */
  following: Token | undefined;
  possessive: boolean;
  /** Short windows either side, so a rule's cost does not grow with the text. */
  before: string;
  after: string;
  text: string;
  shouting: boolean;
  titleCase: boolean;
  explicit: Set<string>;
  dir: NameIndex;
}

function accepted(
  alias: Alias,
  tokens: Token[],
  i: number,
  n: number,
  text: string,
  shouting: boolean,
  titleCase: boolean,
  explicit: Set<string>,
  dir: NameIndex,
): Verdict {
  const first = tokens[i]!;
  const last = tokens[i + n - 1]!;
  const next = tokens[i + n];
  const prev = tokens[i - 1];
  const after = text.slice(last.end, last.end + 40);
  const possessive = /^'s(?![\p{L}\p{N}])/u.test(after);
  const nextAdjacent = next && /^[\s\-]*$/.test(text.slice(last.end, next.start)) ? next : undefined;
  const afterPossessive = next && /^'s\s+$/.test(text.slice(last.end, next.start)) ? next : undefined;
  const c: Context = {
    alias,
    tokens,
    i,
    first,
    last,
    prev,
    prevAdjacent: prev && /^[\s\-]*$/.test(text.slice(prev.end, first.start)) ? prev : undefined,
    nextAdjacent,
    following: possessive ? afterPossessive : nextAdjacent,
    possessive,
    before: text.slice(Math.max(0, first.start - 40), first.start),
    after,
    text,
    shouting,
    titleCase,
    explicit,
    dir,
  };
  return glued(c) ?? vetoed(c) ?? personName(c) ?? insideAnotherName(c) ?? commonWord(c);
}

/** Glued into a compound (`Meta-analysis`, not `Microsoft-backed`) or after a word (`anti-Apple`, not `BRIEF-`). */
function glued(c: Context): Verdict | undefined {
  const compound = /^-(\p{Ll}[\p{L}]*)/u.exec(c.after);
  if (compound && !COMPOUND_OK.has(compound[1]!)) return refused(`glued into a compound word (-${compound[1]})`);
  if (/\p{L}-$/u.test(c.before) && !/(?:^|\s)[\p{Lu}\d ]{2,}-$/u.test(c.before))
    return refused('glued after another word');
  return undefined;
}

function vetoed(c: Context): Verdict | undefined {
  const key = c.alias.key;
  if (c.following && notFollowedBy.get(key)?.has(c.following.norm)) {
    return refused(`vetoed by the word after it (${c.following.norm})`);
  }
  if (c.prevAdjacent && notPrecededBy.get(key)?.has(c.prevAdjacent.norm)) {
    return refused(`vetoed by the word before it (${c.prevAdjacent.norm})`);
  }
  return undefined;
}

/** A person after a title (`Governor Abbott`) or, in sentence case, a given name (`Fiona Apple`); its symbol wins. */
function personName(c: Context): Verdict | undefined {
  const { prev, first, text } = c;
  if (!prev || !startsUpper(prev.raw) || c.explicit.has(c.alias.ticker)) return undefined;
  const gap = text.slice(prev.end, first.start);
  if (TITLES.has(prev.norm) && /^\.?\s+$/.test(gap)) return refused(`a person's name (after the title ${prev.raw})`);
  if (c.titleCase || c.shouting) return undefined;
  if (GIVEN_NAMES.has(prev.norm) && /^\s+$/.test(gap))
    return refused(`a person's name (after the given name ${prev.raw})`);
  const before2 = c.tokens[c.i - 2];
  const initial = /^\p{Lu}$/u.test(prev.raw) && /^\.\s+$/.test(gap);
  if (initial && before2 && GIVEN_NAMES.has(before2.norm) && /^\s+$/.test(text.slice(before2.end, prev.start))) {
    return refused(`a person's name (after ${before2.raw} ${prev.raw}.)`);
  }
  return undefined;
}

/** A name inside another company's name: `Quanta Computer` is not Quanta Services, `Tata Steel` not Tata Motors. */
function insideAnotherName(c: Context): Verdict | undefined {
  const next = c.nextAdjacent;
  if (c.shouting || c.titleCase || !next || !startsUpper(next.raw) || !COMPANY_NOUNS.has(next.norm)) return undefined;
  const longer = `${c.alias.key} ${next.norm}`;
  if (c.dir.keysOf.get(c.alias.ticker)?.some((k) => k === longer || k.startsWith(`${longer} `))) return undefined;
  return refused(`part of another company's name (${c.alias.name} ${next.raw})`);
}

/** A common-word name, or a short one in a shouted headline, needs corporate context (module comment). */
function commonWord(c: Context): Verdict {
  const { alias, prevAdjacent, nextAdjacent } = c;
  if (!alias.common && !(c.shouting && alias.short)) return kept('a directory name written as a name');
  if (c.explicit.has(alias.ticker)) return kept('a common-word name whose symbol the text also gives');
  const capitalBefore = prevAdjacent && startsUpper(prevAdjacent.raw) && !CORPORATE_BEFORE.has(prevAdjacent.norm);
  if (!c.shouting && !c.titleCase && capitalBefore) return refused(`part of another name (after ${prevAdjacent!.raw})`);
  if (c.possessive) return kept('a common-word name in the possessive');
  if (nextAdjacent && CORPORATE_AFTER.has(nextAdjacent.norm)) {
    return kept(`a common-word name before a corporate word (${nextAdjacent.norm})`);
  }
  if (prevAdjacent && CORPORATE_BEFORE.has(prevAdjacent.norm)) {
    return kept(`a common-word name after a sector word (${prevAdjacent.norm})`);
  }
  return refused(
    alias.common
      ? 'a common-word name without corporate context'
      : 'a short name in a capitals headline without corporate context',
  );
}

/** Unique symbols in order of first mention. */
export function findTickers(text: string): string[] {
  return [...new Set(findMentions(text).map((m) => m.ticker))];
}
