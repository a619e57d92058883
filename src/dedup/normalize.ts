/**
 * Headline normal form for near-duplicate detection: urgency flags and wire credits dropped, company
 * names replaced by their symbol (src/enrich), numbers written one way (`25 basis points` = `25bp`,
 * `6 percent` = `6%`, `$7.5 billion` = `7.5b`), synonyms folded (`climbs`/`rises`/`gains` -> `rise`,
 * `tops`/`beats` -> `beat`, `Federal Reserve` -> `fed`), stop words removed, words stemmed.
 */
import { findMentions } from '../enrich/tickers.js';
import { stem } from '../enrich/resources/lexicon.js';

export interface Normalized {
  /** Content tokens (symbols, numbers with unit, stemmed words), unique. */
  tokens: Set<string>;
  /** Numbers with their unit (`25bp`, `6%`, `7.5b`, `n200000`). */
  numbers: Set<string>;
  tickers: Set<string>;
  /** Capitalised words inside the sentence that are not known companies (`Binance`, `Witty`, `Blackwell`), lower case; empty for capitals-only or title-case headlines. */
  entities: Set<string>;
}

const STOP = new Set(
  `a an the and or of to in on at for by with from as its it is are be was were this that after amid over into up
  than more says said say report reports reported says: new its their his her he she they we you after while per
  about has have had will would could may might can just also out amid vs versus via year years week day days today
  s u.s us`.split(/\s+/),
);

/** Capitalised words that name no particular company or product. */
const GENERIC_CAPS = new Set(
  `us u.s uk eu ai ceo cfo ipo etf q1 q2 q3 q4 h1 h2 gdp cpi ppi fed ecb boe boj snb rba pboc opec opec+ wall street
  january february march april may june july august september october november december monday tuesday wednesday
  thursday friday saturday sunday europe european asia asian america american china chinese japan japanese germany
  german france french britain british india indian`.split(/\s+/),
);

/** Ordinary words that often open a headline. */
const COMMON_FIRST = new Set(
  `stocks markets oil gold silver copper crude bonds treasury treasuries yields dollar euro yen sterling pound bitcoin
  crypto global world investors traders analysts shares stock retail home housing jobless initial consumer producer
  factory inflation wheat corn natural gas tech banks bank central court judge regulators regulator officials
  lawmakers government exclusive update analysis insight explainer why how what who when where top big new`.split(/\s+/),
);

const SYNONYMS: Record<string, string> = {};
function syn(canonical: string, words: string): void {
  for (const w of words.split(/\s+/)) SYNONYMS[stem(w)] = canonical;
}
syn('rise', 'rise rises rose rising climb climbs climbed gain gains gained jump jumps jumped advance advances advanced rally rallies rallied up higher surge surges surged soar soars soared leap leaps leapt spike spikes spiked increase increases increased grow grows grew');
syn('fall', 'fall falls fell drop drops dropped decline declines declined slip slips slipped slide slides slid tumble tumbles tumbled plunge plunges plunged sink sinks sank slump slumps slumped down lower dip dips dipped retreat retreats retreated skid skids plummet plummets plummeted decrease decreases decreased');
syn('beat', 'beat beats tops top topped exceed exceeds exceeded surpass surpasses surpassed');
syn('miss', 'miss misses missed');
syn('raise', 'raise raises raised hike hikes hiked lift lifts lifted boost boosts boosted');
syn('cut', 'cut cuts lower lowers lowered reduce reduces reduced slash slashes slashed trim trims trimmed');
syn('profit', 'profit profits earnings income eps');
syn('revenue', 'revenue revenues sales turnover');
syn('estimate', 'estimate estimates expectations consensus');
syn('outlook', 'outlook guidance forecast forecasts target targets goal goals projection view');
syn('annual', 'annual full-year yearly');
syn('halt', 'halt halts halted suspend suspends suspended pull pulls pulled withdraw withdraws withdrew');
syn('split', 'split splits spin spins separate separates breakup');
syn('unit', 'unit division business arm');
syn('cyber', 'cyberattack cyber-attack hack hacked hackers cyber');
syn('win', 'win wins won');
syn('lose', 'lose loses lost');
syn('ceo', 'ceo chief executive boss');
syn('resign', 'resign resigns resigned quits quit ousted departs');
syn('name', 'name names named appoint appoints appointed taps tapped');
syn('unveil', 'unveil unveils unveiled launch launches launched introduce introduces');
syn('fall', 'weaken weakens weakened');
syn('rise', 'strengthen strengthens firms');
syn('job', 'payrolls');
syn('unemployment', 'unemployment jobless');
syn('acquire', 'acquire acquires acquired acquisition buy buys bought purchase purchases takeover deal');
syn('share', 'share shares stock stocks');
syn('job', 'job jobs staff workforce workers employees layoffs layoff');
syn('ceo', 'ceo chief executive');
syn('quarter', 'quarter quarterly q1 q2 q3 q4 first-quarter second-quarter third-quarter fourth-quarter');
syn('rate', 'rate rates');
syn('hold', 'hold holds held steady unchanged keep keeps kept leave leaves');
syn('probe', 'probe probes investigation investigates investigating inquiry');
syn('sue', 'sue sues sued lawsuit suit');
syn('approve', 'approve approves approved approval clears cleared');
syn('inflation', 'inflation cpi prices');
syn('record', 'record all-time');

const PHRASES: [RegExp, string][] = [
  [/\bfederal reserve\b/g, 'fed'],
  [/\beuropean central bank\b/g, 'ecb'],
  [/\bbank of england\b/g, 'boe'],
  [/\bbank of japan\b/g, 'boj'],
  [/\bchief executive( officer)?\b/g, 'ceo'],
  [/\bnet income\b/g, 'profit'],
  [/\bbetter[- ]than[- ]expected\b/g, 'beat estimate'],
  [/\bworse[- ]than[- ]expected\b/g, 'miss estimate'],
  [/\binterest rates?\b/g, 'rate'],
  [/\bfull[- ]year\b/g, 'annual'],
  [/\ball[- ]time high\b/g, 'record high'],
  [/\b(tops?|topped|beats?|beating|miss(?:es|ed)?|exceeds?|exceeded|above|below|short of|surpass(?:es|ed)?)\s+(?:analysts'?\s+|wall street\s+|market\s+)?(?:forecasts?|expectations|estimates|views)\b/g, '$1 estimate'],
  [/\bhalf(?: a)?(?: percentage)?[- ]point\b/g, '50bp'],
  [/\bquarter(?: of a)?(?: percentage)?[- ]point\b/g, '25bp'],
  [/\bto zero\b/g, 'to 0%'],
  [/\bswiss national bank\b/g, 'snb'],
  [/\blay(?:s|ing)? off\b/g, 'cut jobs'],
  [/\bspin(?:s|ning)? off\b/g, 'split'],
  [/\bbreak(?:s|ing)? up\b/g, 'split'],
  [/\bsteps? down\b/g, 'resign'],
  [/\bstepping down\b/g, 'resign'],
  [/\bfirst half\b|\bh1\b/g, 'h1'],
  [/\b(policy|key|benchmark|cash|bank|deposit|repo) rate\b/g, '$1 rate'],
  [/\bbenchmark rates?\b/g, 'rate'],
];

const WORD_NUMBERS: Record<string, string> = { one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9', ten: '10', eleven: '11', twelve: '12' };

const NUMBER = /(?<![\p{L}\d])[$€£¥]?\s?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(%|percent|pct|per cent|basis points?|bps?|bn|billion|bln|b|mln|million|mn|m|trillion|tn|k|thousand)?(?![\p{L}\d])/giu;

function numberToken(value: string, unit: string | undefined): string {
  let n = Number(value.replace(/,/g, ''));
  const u = (unit ?? '').toLowerCase();
  let suffix = '';
  if (u === '%' || u === 'percent' || u === 'pct' || u === 'per cent') suffix = '%';
  else if (u.startsWith('basis') || u === 'bp' || u === 'bps') suffix = 'bp';
  else if (['bn', 'billion', 'bln', 'b'].includes(u)) suffix = 'b';
  else if (['mln', 'million', 'mn', 'm'].includes(u)) {
    n = n / 1000;
    suffix = 'b';
  } else if (['trillion', 'tn'].includes(u)) {
    n = n * 1000;
    suffix = 'b';
  } else if (['k', 'thousand'].includes(u)) {
    n = n * 1000;
    suffix = 'n';
  } else suffix = 'n';
  if (suffix === 'n' && n >= 1e6) {
    n = n / 1e9;
    suffix = 'b';
  }
  return `${Number(n.toPrecision(6))}${suffix}`;
}

const FLAG = /^\s*(?:\*+\s*)?[\[(]?\s*(?:breaking(?:\s+news)?|flash|newsflash|urgent|alert|update\s*\d*|exclusive|wrapup\s*\d*)\s*[\])]?\s*[:\-–—|]?\s*/i;
const CREDIT = /\s*(?:[-–—|]\s*(?:reuters|bloomberg|cnbc|wsj|ft|ap|afp|dow jones|marketwatch|barron's|the wall street journal|financial times)\s*$|\((?:reuters|bloomberg|ap|afp)\)\s*)/gi;

export function normalizeHeadline(text: string): Normalized {
  let t = text.replace(/[’‘`]/g, "'").replace(FLAG, '').replace(CREDIT, ' ');
  const tickers = new Set<string>();
  // Company names and symbols -> one token per instrument.
  const mentions = findMentions(t);
  for (const m of [...mentions].sort((a, b) => b.start - a.start)) {
    t = `${t.slice(0, m.start)} ~${m.ticker.toLowerCase()} ${t.slice(m.end)}`;
    tickers.add(m.ticker);
  }
  const entities = new Set<string>();
  const capsOnly = !/\p{Ll}/u.test(t);
  const words = [...t.matchAll(/[\p{L}][\p{L}\p{N}'\-]*/gu)].filter((m) => !t.slice(0, m.index).endsWith('~'));
  const long = words.filter((m) => m[0].length >= 4);
  const titleCase = long.length >= 3 && long.filter((m) => /^\p{Lu}/u.test(m[0])).length / long.length >= 0.8;
  if (!capsOnly && !titleCase) {
    let run: string[] = [];
    const flush = () => {
      // A run of two or more capitalised words also goes in as its initials (`Ernst & Young` = `EY`).
      if (run.length >= 2) entities.add(run.map((w) => w[0]).join(''));
      run = [];
    };
    words.forEach((m, i) => {
      const w = m[0].replace(/'s$/, '');
      const between = i > 0 ? t.slice(words[i - 1]!.index + words[i - 1]![0].length, m.index) : '';
      if (!/^\s*(?:&\s*)?$/.test(between)) flush();
      // The first word counts when it is no known word (`Samsung profit jumps`, not `Shares jump`).
      const known = i === 0 && (STOP.has(w.toLowerCase()) || SYNONYMS[stem(w.toLowerCase())] !== undefined || COMMON_FIRST.has(w.toLowerCase()));
      if (known || !/^\p{Lu}/u.test(w) || GENERIC_CAPS.has(w.toLowerCase())) {
        flush();
        return;
      }
      entities.add(stem(w.toLowerCase()));
      run.push(w.toLowerCase());
    });
    flush();
  }
  t = t.toLowerCase();
  for (const [re, to] of PHRASES) t = t.replace(re, to);
  t = t.replace(/\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b/g, (w) => WORD_NUMBERS[w]!);
  const numbers = new Set<string>();
  t = t.replace(NUMBER, (_all, value: string, unit: string | undefined) => {
    const tok = `#${numberToken(value, unit)}`;
    numbers.add(tok.slice(1));
    return ` ${tok} `;
  });
  const tokens = new Set<string>();
  for (const m of t.matchAll(/[~#][\p{L}\p{N}][\p{L}\p{N}.%\-]*|[\p{L}\p{N}][\p{L}\p{N}.]*/gu)) {
    let w = m[0].replace(/[.\-]+$/, '');
    if (w.startsWith('~') || w.startsWith('#')) {
      tokens.add(w);
      continue;
    }
    w = w.replace(/'s$/, '');
    if (STOP.has(w) || w.length === 0) continue;
    const s = stem(w);
    tokens.add(SYNONYMS[s] ?? SYNONYMS[w] ?? s);
  }
  return { tokens, numbers, tickers, entities };
}
