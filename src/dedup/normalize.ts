/**
 * Headline normal form for near-duplicate detection, once per headline: companies as symbols, figures one way
 * (`$7.5 billion` = `7.5b`), synonyms folded (`climbs` = `rises`), stop words dropped, words stemmed.
 */
import { COMPANIES } from '../enrich/directory.js';
import { findMentions } from '../enrich/tickers.js';
import { stem } from '../enrich/resources/lexicon.js';

export type NumberKind = '%' | 'bp' | 'b' | 'n' | 'small' | 'year';
export interface NumberValue {
  value: number;
  kind: NumberKind;
  /** Decimals as written (`2.25` -> 2, `10` -> 0): a rounder figure may stand for a precise one. */
  decimals: number;
}

export interface Prepared {
  /** The headline as given (for the cache and for debugging). */
  readonly text: string;
  /** Content tokens (`~symbol`, `#number`, stemmed and folded words), unique. */
  tokens: Set<string>;
  /** Numbers with their unit as tokens (`25bp`, `6%`, `7.5b`, `200000n`, `y2024`). */
  numbers: Set<string>;
  numberValues: NumberValue[];
  tickers: Set<string>;
  /**
   * Capitalised words inside the sentence that are not known companies (`Binance`, `Witty`, `Blackwell`), lower case,
   * stemmed; empty for capitals-only or title-case headlines.
   */
  entities: Set<string>;
  /** Words written in capitals (`NVDA`, `UNH`), lower case: a bare symbol the other headline may name. */
  caps: Set<string>;
  /**
   * Entities that are the initials of a run of capitalised words (`Ernst & Young` -> `ey`): they match, they never
   * conflict.
   */
  initials: Set<string>;
  /** Places and central banks named (`boj` also names `japan`), read from the tokens, so also in title case. */
  places: Set<string>;
  /** Event kinds (results, deal, legal, ...), see similarity.ts. */
  events: Set<string>;
  /** +1 up (rises, beats, above), -1 down (falls, misses, below) in the main clause; 0 neither or both. */
  lean: number;
  /**
   * Exclusive group -> its members present (`month` -> `march`, `quarter` -> `q3`): different members, different
   * stories.
   */
  flags: Map<string, Set<string>>;
  /**
   * Tokens of the main clause (before the first `,`, `;`, `as`, `after`, `on`, ...): the headline's own direction is
   * read there.
   */
  main: string[];
  /** How many entries of `sequence` belong to the main clause. */
  mainLength: number;
  /** Whether it reports a refusal or a cancellation (reject, block, scrap, fail). */
  refusal: boolean;
  /** Whether it says something is not so (`no rush to cut`, `not`, `never`, `without`, `won't`, `rules out`). */
  negated: boolean;
  /** Sum of token weights (similarity.ts `weight`). */
  weight: number;
  /**
   * The normalised headline as a word sequence, stop words kept: where a name stands (similarity.ts `slotConflict`).
   */
  words: string[];
  /** Content tokens in headline order, repeats kept: where two headlines differ (similarity.ts `templateDiff`). */
  sequence: string[];
  /** LSH keys, computed on first use (near.ts). */
  keys?: string[];
}

/** Symbols and figures enter the token stream with a mark in front (`~nvda`, `#6%`), so no word is taken for one. */
const SYMBOL_MARK = 0x7e; // '~'
const FIGURE_MARK = 0x23; // '#'
export const isSymbolToken = (t: string): boolean => t.charCodeAt(0) === SYMBOL_MARK;
export const isFigureToken = (t: string): boolean => t.charCodeAt(0) === FIGURE_MARK;
/** A symbol or a figure: a token that no word of the headline spells. */
export const isMarkedToken = (t: string): boolean => isSymbolToken(t) || isFigureToken(t);

const STOP = new Set(
  `a an the and or of to in on at for by with from as its it is are be was were this that after amid over into up
  than more says said say report reports reported says: new their his her he she they we you while per
  about has have had will would could may might can just also out vs versus via year years week weeks day days
  today s u.s us y/y yoy year-on-year year-over-year on-year annualized annualised pace some nearly almost around roughly
  approximately underlying adjusted additional another now still`.split(/\s+/),
);

/** Capitalised words that name no particular company or product. */
const GENERIC_CAPS = new Set(
  `us u.s uk eu ai ceo cfo ipo etf etfs q1 q2 q3 q4 h1 h2 gdp cpi ppi pce pmi ism fed ecb boe boj snb rba rbi pboc opec opec+ wall
  street january february march april may june july august september october november december monday tuesday
  wednesday thursday friday saturday sunday europe european asia asian america american benchmark exclusive update
  breaking analysis sources source`.split(/\s+/),
);

/** A constant table as a Map of its values stemmed (tables looked up by outside words are Maps). */
function stemmedValues(table: { readonly [word: string]: string }): ReadonlyMap<string, string> {
  return new Map(Object.entries(table).map(([k, v]) => [k, stem(v)]));
}

/**
 * Adjectives of place folded to the place (`Chilean` = `Chile`), stemmed; a Map, so a word like `constructor` is no
 * key.
 */
const DEMONYMS = stemmedValues({
  chilean: 'chile',
  turkish: 'turkey',
  japanese: 'japan',
  chinese: 'china',
  german: 'germany',
  french: 'france',
  british: 'britain',
  uk: 'britain',
  indian: 'india',
  brazilian: 'brazil',
  mexican: 'mexico',
  canadian: 'canada',
  australian: 'australia',
  swiss: 'switzerland',
  swedish: 'sweden',
  norwegian: 'norway',
  danish: 'denmark',
  dutch: 'netherlands',
  italian: 'italy',
  spanish: 'spain',
  korean: 'korea',
  taiwanese: 'taiwan',
  russian: 'russia',
  saudi: 'saudi',
  israeli: 'israel',
  polish: 'poland',
  argentine: 'argentina',
  indonesian: 'indonesia',
  european: 'europe',
  eurozone: 'euro',
  american: 'america',
  irish: 'ireland',
  belgian: 'belgium',
  austrian: 'austria',
  finnish: 'finland',
  greek: 'greece',
  portuguese: 'portugal',
  turkiye: 'turkey',
  ukrainian: 'ukraine',
  egyptian: 'egypt',
  nigerian: 'nigeria',
  vietnamese: 'vietnam',
  thai: 'thailand',
  philippine: 'philippines',
  malaysian: 'malaysia',
  singaporean: 'singapore',
  colombian: 'colombia',
  peruvian: 'peru',
  norwegians: 'norway',
  britons: 'britain',
  hungarian: 'hungary',
  czech: 'czechia',
  romanian: 'romania',
  england: 'britain',
  english: 'britain',
  arabia: 'saudi',
  zealand: 'zealand',
  kiwi: 'zealand',
  // A capital often stands for its government (`Beijing hits US soybeans with tariffs` = `China`).
  beijing: 'china',
  moscow: 'russia',
  kyiv: 'ukraine',
  berlin: 'germany',
  ottawa: 'canada',
  canberra: 'australia',
  tehran: 'iran',
  ankara: 'turkey',
  pyongyang: 'korea',
});

/** Places (countries, regions) as entity tokens: they locate a story but do not tell two stories apart. */
export const PLACES = new Set<string>([
  ...DEMONYMS.values(),
  ...'us uk eu asia africa latin gulf london new york tokyo beijing washington texas california'.split(' '),
]);

/**
 * Place tokens, stemmed as `wordToken` leaves them: each side naming one the other does not tells two stories apart.
 */
const PLACE_TOKENS = new Set<string>([
  ...DEMONYMS.values(),
  ...`canada chile mexico japan china germany france britain india brazil australia switzerland sweden norway denmark
  netherlands italy spain korea taiwan russia israel poland argentina indonesia ireland belgium austria finland greece
  portugal turkey ukraine egypt nigeria vietnam thailand philippines malaysia singapore colombia peru hungary czechia
  romania qatar iran iraq kuwait emirates uae pakistan bangladesh kenya morocco venezuela ecuador
  eu london newyork tokyo beijing shanghai shenzhen hong kong mumbai seoul paris frankfurt zurich stockholm dubai riyadh
  washington texas california ohio delaware
  afghanistan albania algeria angola armenia azerbaijan bahrain belarus bolivia bosnia botswana brunei bulgaria cambodia
  cameroon croatia cuba cyprus estonia ethiopia georgia ghana guatemala honduras iceland jamaica jordan kazakhstan
  kyrgyzstan laos latvia lebanon libya lithuania luxembourg madagascar malta mongolia montenegro mozambique myanmar namibia
  nepal nicaragua oman panama paraguay rwanda senegal serbia slovakia slovenia somalia sudan syria tanzania tunisia uganda
  uruguay uzbekistan yemen zambia zimbabwe lanka greenland
  toronto sydney melbourne jakarta manila bangkok hanoi istanbul moscow kyiv warsaw milan madrid amsterdam
  brussels geneva dublin lisbon vienna oslo copenhagen helsinki athens cairo lagos nairobi johannesburg
  sao paulo bogota lima santiago buenos aires delhi bengaluru osaka taipei doha abu dhabi chicago boston
  florida illinois michigan pennsylvania arizona nevada virginia carolina tennessee indiana wisconsin minnesota
  colorado oregon louisiana kentucky alabama utah`
    .trim()
    .split(/\s+/)
    .map((w) => stem(w)),
]);
/** Central banks: each names its country too (`BOJ` = `Bank of Japan` = `Japan's central bank`). */
const CENTRAL_BANKS = stemmedValues({
  fed: 'us',
  ecb: 'euro',
  boe: 'britain',
  boj: 'japan',
  pboc: 'china',
  rbi: 'india',
  snb: 'switzerland',
  rba: 'australia',
  boc: 'canada',
  rbnz: 'zealand',
  bok: 'korea',
  riksbank: 'sweden',
  norg: 'norway',
  banxico: 'mexico',
});
/** The United States as written (case-sensitive, so the pronoun `us` is not it). */
const US = /\b(?:U\.S\.?|US|USA|United States|America)\b/;

/** Ordinary words that often open a headline. */
const COMMON_FIRST = new Set(
  `stocks markets oil gold silver copper crude bonds treasury treasuries yields dollar euro yen sterling pound bitcoin
  crypto global world investors traders analysts shares stock retail home housing jobless initial consumer producer
  factory inflation wheat corn natural gas tech banks bank central court judge regulators regulator officials
  lawmakers government exclusive update analysis insight explainer why how what who when where top big new benchmark
  chip chipmaker automaker carmaker drugmaker insurer lender miner brewer airline retailer watchdog police
  here breaking`.split(/\s+/),
);

const SYNONYMS = new Map<string, string>();
function syn(canonical: string, words: string): void {
  for (const w of words.trim().split(/\s+/)) SYNONYMS.set(stem(w), canonical);
}
syn(
  'rise',
  'rise rises rose rising climb climbs climbed gain gains gained jump jumps jumped advance advances advanced rally rallies rallied up higher surge surges surged soar soars soared leap leaps leapt spike spikes spiked increase increases increased grow grows grew pop pops popped expand expands expanded',
);
syn(
  'fall',
  'fall falls fell drop drops dropped decline declines declined slip slips slipped slide slides slid tumble tumbles tumbled plunge plunges plunged sink sinks sank slump slumps slumped down lower dip dips dipped retreat retreats retreated skid skids plummet plummets plummeted decrease decreases decreased',
);
syn('shrink', 'shrink shrinks shrank contraction');
syn('beat', 'beat beats tops top topped exceed exceeds exceeded surpass surpasses surpassed');
syn('miss', 'miss misses missed');
syn('raise', 'raise raises raised hike hikes hiked lift lifts lifted boost boosts boosted');
syn(
  'cut',
  'cut cuts reduce reduces reduced reduction reductions slash slashes slashed trim trims trimmed axe axes eliminate eliminates',
);
syn('profit', 'profit profits earnings income eps');
syn('revenue', 'revenue revenues sales turnover');
syn('estimate', 'estimate estimates expectations consensus');
syn('outlook', 'outlook guidance forecast forecasts target targets goal goals projection view');
syn('annual', 'annual full-year yearly');
syn('halt', 'halt halts halted suspend suspends suspended pull pulls pulled withdraw withdraws withdrew');
syn('split', 'split splits spin spins separate separates breakup');
syn('unit', 'unit division business');
syn('cyber', 'cyberattack cyber-attack hack hacked hackers cyber');
syn('win', 'win wins won');
syn('lose', 'lose loses lost');
syn('ceo', 'ceo chief executive boss');
syn('resign', 'resign resigns resigned quits quit ousted departs');
syn('name', 'name names named appoint appoints appointed taps tapped nominate nominates pick');
syn('unveil', 'unveil unveils unveiled launch launches launched introduce introduces');
syn('fall', 'weaken weakens weakened');
syn('rise', 'strengthen strengthens firms');
syn('job', 'payrolls');
syn('unemployment', 'unemployment jobless');
syn('acquire', 'acquire acquires acquired acquisition buy buys bought purchase purchases takeover deal');
syn('share', 'share shares stock stocks');
syn('job', 'job jobs staff workforce workers employees layoffs layoff positions roles');
syn('quarter', 'quarter quarterly');
syn('rate', 'rate rates');
syn('hold', 'hold holds held steady unchanged keep keeps kept leave leaves');
syn('probe', 'probe probes investigation investigates investigating inquiry');
syn('sue', 'sue sues sued lawsuit suit');
syn('approve', 'approve approves approved approval clears cleared greenlights accept accepts accepted');
syn('deny', 'deny denies denied refute refutes refuted');
syn('reject', 'reject rejects rejected rebuff rebuffs rebuffed block blocks blocked fail fails failed');
syn('scrap', 'scrap scraps scrapped abandon abandons abandoned terminate terminates terminated');
syn('begin', 'begin begins began start starts started');
syn('inflation', 'inflation cpi prices');
syn('record', 'record all-time');
syn('invest', 'invest invests investment investments spend spends spending pledge pledges');
syn('vehicle', 'vehicle vehicles car cars');
syn('settle', 'settle settles settled settlement');
syn('above', 'above past over');
syn('below', 'below under');
syn('valu', 'valuation valued value');
syn('gdp', 'gdp economy');
syn('factory', 'factory industrial');
syn('oil', 'oil crude');
syn('ounce', 'ounce ounces oz');
syn('invest', 'commit commits committed');
syn('rise', 'add adds added');
syn('strong', 'strong stronger upbeat robust solid');
syn('outlook', 'sees guide projects');
syn('global', 'global world worldwide');
// Common headline synonyms (general language, not fitted to one pair).
syn('hit', 'reach reaches reached touch touches touched');
syn('best', 'best strongest');
syn('worst', 'worst weakest');
syn('slow', 'slow slows slowed ease eases eased cool cools cooled moderate moderates moderated');
syn('talk', 'talks negotiation negotiations');
syn('win', 'secure secures secured');
syn('fine', 'fine fines fined penalty penalties');
syn('factory', 'plant plants');
syn('miss', 'disappoint disappoints disappointed');
syn('output', 'output production');
syn('hit', 'face faces faced');

/** Multi-word phrases, each folded to one form, in this order. */
const PHRASES: [RegExp, string][] = [
  [/\bfederal reserve\b/g, 'fed'],
  [/\b(?:china's central bank|people's bank of china)\b/g, 'pboc'],
  [/\b(?:india's central bank)\b/g, 'rbi'],
  [/\b(?:japan's central bank)\b/g, 'boj'],
  [/\beuropean central bank\b/g, 'ecb'],
  [/\bbank of england\b/g, 'boe'],
  [/\bbank of japan\b/g, 'boj'],
  [/\bbank of canada\b/g, 'boc'],
  [/\bbank of korea\b/g, 'bok'],
  [/\bbank of mexico\b/g, 'banxico'],
  [/\breserve bank of australia\b/g, 'rba'],
  [/\breserve bank of new zealand\b/g, 'rbnz'],
  [/\bnorges bank\b/g, 'norges'],
  [/\breserve bank of india\b/g, 'rbi'],
  [/\bchief executive( officer)?\b/g, 'ceo'],
  [/\bnet income\b/g, 'profit'],
  [/\bbetter[- ]than[- ]expected\b/g, 'beat estimate'],
  [/\bworse[- ]than[- ]expected\b/g, 'miss estimate'],
  [/\binterest rates?\b/g, 'rate'],
  [/\bfull[- ]year\b/g, 'annual'],
  [/\ball[- ]time high\b/g, 'record high'],
  [
    /\b(tops?|topped|topping|beats?|beating|miss(?:es|ed|ing)?|exceeds?|exceeded|exceeding|above|ahead of|below|short of|surpass(?:es|ed|ing)?)\s+(?:analysts'?\s+|wall street\s+|market\s+)?(?:forecasts?|expectations|estimates|views)\b/g,
    '$1 estimate',
  ],
  [/\b(?:fall(?:s|ing)?|fell) short of\b/g, 'miss'],
  [/\bhalf(?: a)?(?: percentage)?[- ]point\b/g, '50bp'],
  [/\bquarter(?: of a)?(?: percentage)?[- ]point\b/g, '25bp'],
  [/\bto zero\b/g, 'to 0%'],
  [/\bswiss national bank\b/g, 'snb'],
  // `lower` is a fall (`closes lower`, `on lower prices`, `falls to lower levels`); the verb (`lowers`, `to lower
  // rates`) is a cut. The stemmer gives all three forms one stem, so the verb is told here.
  [
    /(?<!\b(?:fall|fell|slip|drop|slid|sank|sink|dip|move|edge|head|drift|retreat|trend|ease|declin)\w* )\b(?:(to|will|may|might|could|would|should|must|can) lower|lower(?:s|ed|ing))\b/g,
    '$1 cut',
  ],
  [/\blay(?:s|ing)? off\b/g, 'cut jobs'],
  [/\blaid off\b/g, 'cut jobs'],
  [/\bspin(?:s|ning)? off\b/g, 'split'],
  [/\bbreak(?:s|ing)? up\b/g, 'split'],
  [/\bsteps? down\b/g, 'resign'],
  [/\bstepping down\b/g, 'resign'],
  [/\bcall(?:s|ed|ing)? off\b/g, 'scrap'],
  [/\bfirst[- ]half\b/g, 'h1'],
  [/\bsecond[- ]half\b/g, 'h2'],
  // The policy rate by any of its names is the rate (`key rate` = `policy rate` = `rates`); the deposit and repo rates
  // stay named.
  [/\b(?:policy|key|benchmark|cash|bank|official) rates?\b/g, 'rate'],
  [/\bartificial intelligence\b/g, 'ai'],
  [/\beuro[- ]zone\b/g, 'eurozone'],
  [/\bmarket (?:cap|capitalization|value)\b/g, 'valu'],
  [/\bshare (?:repurchase|buyback)s?\b/g, 'share buyback'],
  [/\bbuy(?:s|ing)? back\b/g, 'buyback'],
  [/\b(?:as much as|as many as|up to|more than|at least|about)\b/g, ' '],
  [/\bfor the first time\b/g, 'first time'],
  [/\bfirst-ever\b/g, 'first'],
  [/\bbarrels? (?:per|a) day\b/g, 'bpd'],
  [/\b(?:justice department|department of justice)\b/g, 'doj'],
  [/\bfederal trade commission\b/g, 'ftc'],
  [/\bsecurities and exchange commission\b/g, 'sec'],
  [/\binternational monetary fund\b/g, 'imf'],
  [/\bworld bank\b/g, 'worldbank'],
  [/\bs&p\s?500\b/g, 'sp500'],
  // Which housing series (`new home sales` / `existing home sales`).
  [/\b(new|existing|pending) home\b/g, '$1home'],
  [/\bnew york\b/g, 'newyork'],
  [/\bstrik(?:es|ing)? down\b/g, 'block'],
  // Forms of one thing: an economy's output, a shrinking economy, a figure against the forecast, a repeat.
  [/\b(economy|gdp|output|activity) contract(?:s|ed|ing)?\b/g, '$1 shrink'],
  [/\bbelow estimate\b/g, 'miss estimate'],
  [/\babove estimate\b/g, 'beat estimate'],
  [/\bahead of estimate\b/g, 'beat estimate'],
  [/\bsame[- ]store\b/g, 'comparable'],
  [/\blike[- ]for[- ]like\b/g, 'comparable'],
  [/\b(?:for )?(?:a |the )?second time\b/g, 'again'],
  [/\bbefore the bell\b/g, 'premarket'],
  [/\bpre-market\b/g, 'premarket'],
  [/\bnatural gas\b/g, 'natgas'],
  [/\btrade (?:deal|agreement|pact|accord)s?\b/g, 'tradedeal'],
  // Dropping a case, a bid or a plan is calling it off (`SEC drops lawsuit against Binance`), not a fall.
  [
    /\bdrop(?:s|ped|ping)? (?:its |the |a |an |his |her |their )?(lawsuit|suit|case|charges|probe|investigation|bid|offer|plans?|claims?)\b/g,
    'scrap $1',
  ],
  // Turning down a report is denying it (`rejects report of plan to sell` = `denies report`), not a refusal of a deal.
  [
    /\b(?:rejects?|rejected|dismiss(?:es|ed)?|refutes?|refuted) (reports?|claims?|speculation|rumou?rs?)\b/g,
    'denies $1',
  ],
  // A move written as `up 2%`, `up $20`, `+2%` or `-2%` is a rise or a fall (`up` alone is a stop word, a sign no part
  // of a figure): `Gold up 2%` and `Gold down 2%` are two stories; `snaps up 2 startups` is no move. After `up to`, a
  // bound.
  [/\bup (?=[$€£]\d|\d[\d.,]*\s?(?:%|percent|bps?\b|basis|points?\b|pts\b|cents?\b))/g, 'rise '],
  [/(^|[\s(])\+(?=\d)/g, '$1rise '],
  [/(^|[\s(])[-−–](?=\d)/g, '$1fall '],
];

/**
 * Index names that hold a number are names, not figures (`FTSE 100 closes above 9,000` / `8,000`; `S&P 500` is a phrase
 * above).
 */
const INDEX_NUMBER =
  /\b(ftse|stoxx|nikkei|cac|dax|russell|csi|asx|kospi|nifty)\s?(100|600|225|40|2000|300|200|50)\b(?!,\d)/g;

/**
 * Words that announce an event as expected, not done (lower case): `expected to`, `poised to`, `likely to`, `seen ...`,
 * `set to`.
 */
const PREVIEW = /\b(?:expected|poised|likely|set) to\b|\bseen (?:cutting|raising|hiking|holding|rising|falling)\b/;

/** Words that deny what the headline would otherwise say (lower case). */
const NEGATION =
  /\b(?:no|not|never|without|nor|unlikely|rules? out|ruled out|deny|denies|denied|refutes?|refuted)\b|n't\b/;

/** A change in percentage points as basis points (`0.75 percentage point` = `0.75 ppt` = `75 bps`). */
const PERCENTAGE_POINTS = /\b(\d+(?:\.\d+)?)[- ]?(?:percentage[- ]points?|ppts?|pps?)\b/g;

/** Quarter ordinals: `Q3`, `3Q`, `third-quarter`, `third quarter` -> `q3` (the token `quarter` is kept too). */
const QUARTER = /\b(?:q([1-4])|([1-4])q|(first|second|third|fourth)[- ]quarter)\b/g;
const ORDINAL = new Map([
  ['first', '1'],
  ['second', '2'],
  ['third', '3'],
  ['fourth', '4'],
]);

const MONTHS = new Set(
  'january february march april may june july august september october november december'.split(' '),
);

/** Numbers written as words, one to twelve, read as digits (`two-week high` = `2-week high`). */
const NUMBER_WORDS = 'one two three four five six seven eight nine ten eleven twelve'.split(' ');
const WORD_NUMBER = new RegExp(`\\b(?:${NUMBER_WORDS.join('|')})\\b`, 'g');
const WORD_NUMBERS = new Map(NUMBER_WORDS.map((w, i) => [w, String(i + 1)]));

const NUMBER =
  /(?<![\p{L}\d.~])([$€£¥]?)\s?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(%|percent|pct|per cent|basis points?|bps?|bn|billion|bln|b|mln|million|mn|m|trillion|trln|tn|t|k|thousand)?(?![\p{L}\d])/giu;

/** Digits after the decimal point of a written number. */
function decimalsOf(written: string): number {
  const dot = written.indexOf('.');
  return dot < 0 ? 0 : written.length - dot - 1;
}

function numberValue(currency: string, value: string, unit: string | undefined): NumberValue {
  const plain = value.replace(/,/g, '');
  let n = Number(plain);
  let decimals = decimalsOf(plain);
  const u = (unit ?? '').toLowerCase();
  let kind: NumberKind;
  if (u === '%' || u === 'percent' || u === 'pct' || u === 'per cent') kind = '%';
  else if (u.startsWith('basis') || u === 'bp' || u === 'bps') kind = 'bp';
  else if (['bn', 'billion', 'bln', 'b'].includes(u)) kind = 'b';
  else if (['mln', 'million', 'mn', 'm'].includes(u)) {
    n = n / 1000;
    decimals += 3;
    kind = 'b';
  } else if (['trillion', 'trln', 'tn'].includes(u) || (u === 't' && currency !== '')) {
    n = n * 1000;
    decimals = Math.max(0, decimals - 3);
    kind = 'b';
  } else if (['k', 'thousand'].includes(u)) {
    n = n * 1000;
    decimals = Math.max(0, decimals - 3);
    kind = 'n';
  } else if (currency === '' && decimals === 0 && n >= 1900 && n <= 2100 && !value.includes(',')) kind = 'year';
  else kind = 'n';
  if (kind === 'n' && n >= 1e6) {
    n = n / 1e9;
    kind = 'b';
  }
  if (kind === 'n' && n < 100 && currency === '') kind = 'small';
  n = Number(n.toPrecision(6));
  // `2.0` is `2`: trailing zeros add no precision.
  decimals = Math.min(decimals, decimalsOf(String(n)));
  return { value: n, kind, decimals };
}

export function numberToken(v: NumberValue): string {
  if (v.kind === 'year') return `y${v.value}`;
  if (v.kind === 'small') return `${v.value}n`;
  return `${v.value}${v.kind}`;
}

const FLAG =
  /^\s*(?:\*+\s*)?[\[(]?\s*(?:breaking(?:\s+news)?|flash|newsflash|urgent|alert|update\s*\d*|exclusive|wrapup\s*\d*)\s*[\])]?\s*[:\-–—|]?\s*/i;
const CREDIT =
  /\s*(?:[-–—|]\s*(?:reuters|bloomberg|cnbc|wsj|ft|ap|afp|dow jones|marketwatch|barron's|the wall street journal|financial times|sources?|source says|people familiar(?: say)?)\s*$|\((?:reuters|bloomberg|ap|afp)\)\s*)/gi;

/**
 * Alias words of each symbol (`DAL` -> delta, `MSTR` -> microstrategy): the other headline may name the company by a
 * word the dictionary does not take alone.
 */
export const ALIAS_WORDS = new Map<string, Set<string>>();
for (const [ticker, names] of COMPANIES) {
  // The symbol without its exchange suffix or share class (`BT-A.L` -> `bt-a` and `bt`).
  const words = new Set<string>([
    ticker.toLowerCase().replace(/\..*$/, ''),
    ticker.toLowerCase().replace(/[-.].*$/, ''),
  ]);
  for (const raw of names.split('|')) {
    const first = raw.replace(/^\?/, '').split(/[\s\-.]+/)[0];
    if (first && first.length >= 3) words.add(stem(first.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()));
  }
  ALIAS_WORDS.set(ticker, words);
}
/** Names the dictionary does not give: a company's new name (`Strategy`), its US listing's symbol (`NVO`). */
for (const [ticker, extra] of [
  ['MSTR', 'strategy'],
  ['NOVO-B.CO', 'nvo'],
] as const)
  ALIAS_WORDS.get(ticker)?.add(extra);

/** A word without its possessive (`Apple's` -> `Apple`). */
const withoutPossessive = (w: string): string => (w.endsWith("'s") ? w.slice(0, -2) : w);

/** Word -> token memo, cleared when it outgrows WORD_MEMO_MAX (a headline vocabulary is far smaller). */
const WORD_MEMO_MAX = 50_000;
const wordMemo = new Map<string, string | null>();
export function wordToken(w: string): string | null {
  let t = wordMemo.get(w);
  if (t !== undefined) return t;
  const bare = withoutPossessive(w);
  if (STOP.has(bare) || bare.length === 0) t = null;
  else {
    const s = stem(bare);
    t = SYNONYMS.get(s) ?? SYNONYMS.get(bare) ?? DEMONYMS.get(bare) ?? s;
  }
  if (wordMemo.size > WORD_MEMO_MAX) wordMemo.clear();
  wordMemo.set(w, t);
  return t;
}

const CLAUSE = /[,;:]|\s(?:as|after|amid|on|while|following|despite|even|but|with|citing|due)\s/;
const WORD = /[\p{L}][\p{L}\p{N}'\-]*/gu;
const TOKEN = /[~#][\p{L}\p{N}$][\p{L}\p{N}.%\-]*|[\p{L}\p{N}][\p{L}\p{N}.']*/gu;

function startsUpper(w: string): boolean {
  const c = w[0]!;
  return c !== c.toLowerCase();
}

function entitiesOf(t: string, caps: Set<string>, initials: Set<string>): Set<string> {
  const entities = new Set<string>();
  const words: RegExpExecArray[] = [];
  let lower = false;
  for (const m of t.matchAll(WORD)) {
    if (t[m.index - 1] === '~') continue;
    words.push(m);
    const w = m[0];
    const upper = w.toUpperCase();
    if (w !== upper) lower = true;
    else if (w.length >= 2 && w.length <= 5) caps.add(w.toLowerCase());
  }
  if (!lower) return entities;
  let long = 0;
  let capital = 0;
  for (const m of words) {
    if (m[0].length < 4) continue;
    long++;
    if (startsUpper(m[0])) capital++;
  }
  // Title case (4 in 5 words of 4+ letters capitalised): its capitals name nothing.
  if (long >= 3 && capital / long >= 0.8) return entities;
  let run: string[] = [];
  const flush = () => {
    // A run of two or more capitalised words also goes in as its initials (`Ernst & Young` = `EY`).
    if (run.length >= 2) {
      const i = run.map((w) => w[0]).join('');
      entities.add(i);
      initials.add(i);
    }
    run = [];
  };
  for (let i = 0; i < words.length; i++) {
    const m = words[i]!;
    const w = withoutPossessive(m[0]);
    const lw = w.toLowerCase();
    const prev = words[i - 1];
    if (prev) {
      // A run goes on across one space or an `&` between spaces (`Ernst & Young`), not across other marks.
      const gap = t.slice(prev.index + prev[0].length, m.index);
      if (gap.length === 1 ? gap !== ' ' : !/^\s*(?:&\s*)?$/.test(gap)) flush();
    }
    // The first word counts when it is no known word (`Samsung profit jumps`, not `Shares jump`).
    const known = i === 0 && (STOP.has(lw) || SYNONYMS.has(stem(lw)) || COMMON_FIRST.has(lw) || MONTHS.has(lw));
    // A unit glued to a number (`$5B`, `80K`) is no name.
    const unitWord = /^[BMK]n?$/.test(w) && /\d\s?$/.test(t.slice(0, m.index));
    if (known || unitWord || !startsUpper(w) || GENERIC_CAPS.has(lw)) {
      flush();
      continue;
    }
    entities.add(DEMONYMS.get(lw) ?? stem(lw));
    run.push(lw);
  }
  flush();
  return entities;
}

/** Code points a reader does not see (default-ignorable, `Cf`, non-whitespace `Cc`): removed, not made a space. */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]|(?![\t\n\v\f\r\u0085])\p{Cc}/gu;
/** Marks that compatibility forms do not cover, written one way: hyphens and minus, the apostrophe, trademark signs. */
const HYPHENS = /[\u2010\u2011\u2012\u2212\u2043]/g;
const APOSTROPHES = /[’‘`\u201B\u02BC\u2032\uFF07]/g;
const SIGNS = /[™℠®©]/g;
/** Accents on Latin letters after canonical decomposition (`Nestlé` = `Nestle`, `Société` = `Societe`). */
const LATIN_MARKS = /(\p{Script=Latin})\p{M}+/gu;
/** A letter that may carry an accent: Latin beyond ASCII (NFKC output is composed). */
const LATIN_MARK_HINT = /[\u00C0-\u024F\u1E00-\u1EFF]/;
/** Anything beyond printable ASCII, a backtick, or two spaces in a row: the slow path of `canonicalHeadline`. */
const NOT_PLAIN = /[^\x20-\x5f\x61-\x7e]| {2}/;

/**
 * The headline as a reader sees it, written one way: near-duplicate keys and decisions start from it. Invisible
 * code points removed, NFKC (`ＮＶＩＤＩＡ` = `NVIDIA`), Latin accents dropped, hyphens, apostrophes, whitespace one way.
 */
export function canonicalHeadline(text: string): string {
  if (!NOT_PLAIN.test(text)) return text.trim();
  // Signs before NFKC, which would spell `™` as the letters `TM`.
  let t = text.replace(INVISIBLE, '').replace(SIGNS, '').normalize('NFKC');
  if (LATIN_MARK_HINT.test(t)) t = t.normalize('NFD').replace(LATIN_MARKS, '$1').normalize('NFC');
  // `\s` leaves out U+0085 (next line).
  return t
    .replace(HYPHENS, '-')
    .replace(APOSTROPHES, "'")
    .replace(/[\s\u0085]+/g, ' ')
    .trim();
}

/** The normal form of a headline (see the module comment). Deterministic; cheap enough to run per item. */
export function normalizeTokens(text: string): Prepared {
  const tickers = new Set<string>();
  let t = symbolsAsTokens(withoutFlagAndCredit(text), tickers);
  const caps = new Set<string>();
  const initials = new Set<string>();
  const entities = entitiesOf(t, caps, initials);
  const places = new Set<string>();
  if (US.test(t)) places.add('us');
  const flags = new Map<string, Set<string>>();
  const numbers = new Set<string>();
  const numberValues: NumberValue[] = [];
  t = foldPhrases(t.toLowerCase());
  t = foldQuarters(t, flags);
  t = figuresAsTokens(t, numbers, numberValues);
  const prepared: Prepared = {
    text,
    words: [],
    sequence: [],
    tokens: new Set(),
    numbers,
    numberValues,
    tickers,
    entities,
    caps,
    initials,
    places,
    events: new Set(),
    lean: 0,
    flags,
    main: [],
    mainLength: 0,
    refusal: false,
    negated: NEGATION.test(t),
    weight: 0,
  };
  readTokens(t, prepared);
  // A preview of an event (`ECB expected to cut rates`) is another story than the event (`ECB cuts rates`).
  if (PREVIEW.test(t)) addFlag(flags, 'mode', 'preview');
  return prepared;
}

function withoutFlagAndCredit(text: string): string {
  const t = canonicalHeadline(text).replace(FLAG, '');
  return t.includes('(') || /[-–—|]/.test(t) ? t.replace(CREDIT, ' ') : t;
}

/** Each company name or symbol found replaced by one ` ~symbol ` token (lower case); its symbol goes into `tickers`. */
function symbolsAsTokens(text: string, tickers: Set<string>): string {
  let t = text;
  const mentions = findMentions(t);
  // Last mention first, so the offsets of the earlier ones still hold.
  for (let i = mentions.length - 1; i >= 0; i--) {
    const m = mentions[i]!;
    t = `${t.slice(0, m.start)} ~${m.ticker.toLowerCase()} ${t.slice(m.end)}`;
    tickers.add(m.ticker);
  }
  return t;
}

/** Lower-case text with its phrases folded (PHRASES), index names kept whole, percentage points as basis points. */
function foldPhrases(lower: string): string {
  let t = lower;
  for (const [re, to] of PHRASES) t = t.replace(re, to);
  if (/\d/.test(t)) t = t.replace(INDEX_NUMBER, '$1$2');
  if (/\dp|percentage/.test(t))
    t = t.replace(PERCENTAGE_POINTS, (_all, x: string) => `${Number((Number(x) * 100).toPrecision(6))}bp`);
  return t;
}

/** Adds `member` to the exclusive group `group` of a headline's flags. */
export function addFlag(flags: Map<string, Set<string>>, group: string, member: string): void {
  const set = flags.get(group);
  if (set) set.add(member);
  else flags.set(group, new Set([member]));
}

/** Every quarter ordinal (`Q3`, `3Q`, `third-quarter`) written as the word `quarter`, its number flagged (`q3`). */
function foldQuarters(t: string, flags: Map<string, Set<string>>): string {
  if (!/[1-4]q|q[1-4]|quarter/.test(t)) return t;
  return t.replace(QUARTER, (_all, a?: string, b?: string, c?: string) => {
    addFlag(flags, 'quarter', `q${a ?? b ?? ORDINAL.get(c!)}`);
    return ' quarter ';
  });
}

/** Every figure (number words too) as one ` #token `, collected into `numbers` and, once each, `numberValues`. */
function figuresAsTokens(t: string, numbers: Set<string>, numberValues: NumberValue[]): string {
  return t
    .replace(WORD_NUMBER, (w) => WORD_NUMBERS.get(w)!)
    .replace(NUMBER, (_all, currency: string, value: string, unit: string | undefined) => {
      const v = numberValue(currency, value, unit);
      const tok = numberToken(v);
      if (!numbers.has(tok)) numberValues.push(v);
      numbers.add(tok);
      return ` #${tok} `;
    });
}

/** Reads the folded text into `p` in headline order: words, content tokens, main clause, places and months. */
function readTokens(t: string, p: Prepared): void {
  const { words, sequence, tokens, main, places, flags } = p;
  let mainLength = 0;
  const clause = CLAUSE.exec(t);
  const mainEnd = clause ? clause.index : t.length;
  for (const m of t.matchAll(TOKEN)) {
    const w = m[0].replace(/[.\-']+$/, '');
    if (w.length === 0) continue;
    words.push(withoutPossessive(w));
    const inMain = m.index < mainEnd;
    // Symbols and figures are tokens as they stand; only words are folded and read for places and months.
    let tok: string | null = w;
    if (!isMarkedToken(w)) {
      if (MONTHS.has(w)) addFlag(flags, 'month', w);
      tok = wordToken(w);
      if (tok === null) continue;
      addPlaces(places, tok);
      if (inMain) main.push(tok);
    }
    tokens.add(tok);
    sequence.push(tok);
    if (inMain) mainLength = sequence.length;
  }
  p.mainLength = mainLength;
}

/** The places a content token names: a place itself (`america` as `us`), a central bank itself and its country. */
function addPlaces(places: Set<string>, tok: string): void {
  if (PLACE_TOKENS.has(tok)) places.add(tok === 'america' ? 'us' : tok);
  const bankOf = CENTRAL_BANKS.get(tok);
  if (bankOf !== undefined) {
    places.add(tok);
    places.add(bankOf);
  }
}
