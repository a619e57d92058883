/**
 * Headline normal form for near-duplicate detection: urgency flags and wire credits dropped, company
 * names replaced by their symbol (src/enrich), numbers written one way (`25 basis points` = `25bp`,
 * `6 percent` = `6%`, `$7.5 billion` = `7.5b`), synonyms folded (`climbs`/`rises`/`gains` -> `rise`,
 * `tops`/`beats` -> `beat`, `Federal Reserve` -> `fed`), stop words removed, words stemmed.
 */
import { findMentions } from '../enrich/tickers.js';
import { stem } from '../enrich/data/lexicon.js';

export interface Normalized {
  /** Content tokens (symbols, numbers with unit, stemmed words), unique. */
  tokens: Set<string>;
  /** Numbers with their unit (`25bp`, `6%`, `7.5b`, `n200000`). */
  numbers: Set<string>;
  tickers: Set<string>;
}

const STOP = new Set(
  `a an the and or of to in on at for by with from as its it is are be was were this that after amid over into up
  than more says said say report reports reported says: new its their his her he she they we you after while per
  about has have had will would could may might can just also out amid vs versus via year years week day days today
  s u.s us`.split(/\s+/),
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
syn('estimate', 'estimate estimates expectations forecasts consensus views');
syn('outlook', 'outlook guidance');
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
  [/\bbenchmark rates?\b/g, 'rate'],
];

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
  t = t.toLowerCase();
  for (const [re, to] of PHRASES) t = t.replace(re, to);
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
  return { tokens, numbers, tickers };
}
