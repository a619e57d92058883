/**
 * How much a story is about each company it names (`TickerSentiment.relevance`, 0 to 1), by its best mention's role:
 * | role | relevance | when |
 * |---|---|---|
 * | subject | 1 | the headline's first company with no other role, or the company a broker rates |
 * | co-subject | 0.8 | another headline company with no other role (`Visa and Mastercard settle`) |
 * | body | 0.6 / 0.4 | named only after the first sentence: twice or more / once |
 * | passing | 0.3 | beside the story: `Walmart rival Target`, `suppliers such as Intel`, `Microsoft-backed` |
 * | rating | 0.2 | the broker: `Citigroup upgrades AbbVie`, `cut to hold at Jefferies` |
 * | source | 0.2 | of a quote or forecast: `…, Goldman says`, `according to UBS`, `JPMorgan analysts see` |
 * A company named alone keeps 1 unless its own analysts speak. The default `min_relevance` (0.5) keeps subjects,
 * co-subjects and companies the body names twice.
 */
import type { Mention } from './tickers.js';

export type Role = 'subject' | 'co-subject' | 'body' | 'passing' | 'rating' | 'source';

const ROLE_RELEVANCE: Readonly<Record<Exclude<Role, 'body'>, number>> = {
  subject: 1,
  'co-subject': 0.8,
  passing: 0.3,
  rating: 0.2,
  source: 0.2,
};
/** Only the first mentions are read: a text naming thousands costs no more than one naming a few hundred. */
const MENTIONS_READ = 500;
const BODY_REPEATED = 0.6;
const BODY_ONCE = 0.4;

export interface Relevance {
  role: Role;
  relevance: number;
}

const GRADES = String.raw`(?:strong[- ]buy|buy|sell|hold|neutral|(?:sector|market) (?:out|under)perform|in[- ]line|overweight|underweight|outperform|underperform|equal[- ]weight|market[- ]perform|sector[- ]perform|peer[- ]perform|accumulate|reduce)`;
/** What only a rating says: an upgrade, a target, coverage, a grade (`cut to hold`, `keeps underweight`), a list. */
const RATING_WORDS = new RegExp(
  String.raw`\b(?:upgrade[ds]?|downgrade[ds]?|double-(?:up|down)grade[ds]?|(?:price )?target\b|PT\b|price objective|fair value|rating|coverage|conviction|catalyst watch|top pick|focus list|(?:upgraded|downgraded|raised|raises|cut|cuts|lowered|lowers|lifted|lifts|moved|moves|initiated|initiates|started|starts|reiterated|reiterates|rated|rates|resumed|resumes|reinstated|reinstates|maintained|maintains|kept|keeps)\s+(?:\S+\s+){0,3}?(?:(?:to|at|with an?|as|on)\s+)?${GRADES}\b)`,
  'i',
);
/** A broker's house name after its name (`RBC Capital Markets`, `BNP Paribas Exane`, `Evercore ISI`, `Itaú BBA`). */
const HOUSE = String.raw`(?:[\p{Lu}][\p{L}&.'-]*\s+){0,3}`;
/** A broker's verb between its name and the company it rates (`UBS raises its price target on Apple`). */
const RATING_VERB = new RegExp(
  String.raw`^\s*${HOUSE}(?:analysts?\s+|research\s+|securities\s+)?(?:(?:double-)?(?:upgrades?|upgraded|downgrades?|downgraded)|initiates?|initiated|starts?|started|resumes?|resumed|reinstates?|reinstated|reiterates?|reiterated|maintains?|maintained|keeps?|rates?|rated|raises?|raised|lifts?|lifted|boosts?|boosted|hikes?|hiked|cuts?|lowers?|lowered|trims?|trimmed|slashes|slashed|sets?|assigns?|begins?|places?|moves?|adds?|removes?|opens?|opened)\s+(?:(?:its|the|a|an|price|target|targets|objective|on|for|of|rating|coverage|to|with|positive|negative|catalyst|watch|fair|value|estimate|${GRADES})\s+){0,5}$`,
  'iu',
);
/** A broker's verb before a capitalised name the directory does not know (`Citi upgrades DBS to buy`). */
const RATING_ALONE = new RegExp(
  String.raw`^\s*${HOUSE}(?:analysts?\s+)?(?:(?:double-)?(?:upgrades?|downgrades?)|initiates?|starts?|resumes?|reinstates?|reiterates?|cuts?|raises?|lifts?|lowers?|trims?)\s+(?:coverage\s+(?:of|on)\s+)?\p{Lu}`,
  'u',
);
/** The company's survey, study or data as the source (`Amundi survey finds`, `BofA app data show`). */
const SOURCE_FINDS =
  /^(?:'s)?\s+(?:[\p{L}-]+\s+){0,2}?(?:survey|study|poll|report|data|index|research|analysis|pmi|barometer|tracker|gauge)\s+(?:shows?|finds?|found|showed|says?|suggests?)\b/iu;

/** The broker after the rated company: `upgraded to buy at Citigroup`, `target cut by UBS`, `- Jefferies`. */
const RATING_BY = /(?:\b(?:at|by|from)|[-–—:|])\s*$/i;
/** A source's verb right after its name (its analysts, strategists or economists may stand between). */
const SOURCE_VERB =
  /^(?:'s)?\s*(?:analysts?|strategists?|economists?|research|chief economist|CEO|chief executive|boss)?\s*(?:says?|said|sees?|expects?|estimates?|forecasts?|predicts?|warns?|reckons?|notes?|thinks?|believes?|projects?|survey|data|poll|index)\b/i;
/** Analysts or economists of the company speak: a source even when it is the only company named. */
const OWN_ANALYSTS = /^(?:'s)?\s*(?:analysts?|strategists?|economists?)\b/i;
const SOURCE_BEFORE = /\baccording to\s*$/i;
/** A trailing attribution: `…, JPMorgan says.` */
const SOURCE_AFTER_COMMA =
  /^(?:'s)?\s*(?:[\p{L}&'-]+\s+){0,3}?(?:says?|said|writes?|wrote|notes?|noted|estimates?|predicts?|forecasts?|finds?|found|shows?|showed|suggests?|reckons?|calculates?)\b\s*[.!]?\s*$/iu;
/** Before a company named beside the story: a comparison, an example, a counterparty (`order from Tesla`). */
const PASSING_BEFORE =
  /\b(?:rivals?|peers?|like|unlike|such as|including|includes|than|supplier to|suppliers to|customer|customers|clients?|partners?|competitors?|compared with|compete with|partnership with|ahead of|behind|former|ex|owner|parent|unit of|part of|(?:orders?|contracts?|business|deposits|share|customers|shoppers|traffic) from|(?<!\b(?:bid|bids|offer|offers|takeover|deal|buyout|approach|tender|talks|plan)\s)for)\s*$/i;
const PASSING_AFTER =
  /^(?:'s)?[\s-]*(?:rivals?|peers?|suppliers?|competitors?|-?backed|-?owned|-?led|-?controlled|-?funded|partners?|customers?|clients?)\b/i;

/** A relation noun between companies (`Walmart rival Target`, `AB InBev's arm Ambev`): the second is the story's. */
const APPOSITION =
  /^(?:'s\s+(?:[\p{L}-]+\s+){0,2}?|\s+)(?:rivals?|peers?|suppliers?|competitors?|partners?|customers?|clients?|owner|parent|unit|arm|subsidiary|division|affiliate|spin-?off|assembler|contractor|distributor|licensee|joint venture)\s+$/iu;

const SENTENCE_END = /[.!?](?=\s+[\p{Lu}\d"'“])|\n/u;

/** A relation noun and then a capitalised name the directory does not know (`Apple supplier Hon Hai`). */
const APPOSITION_UNKNOWN =
  /^(?:'s)?\s+(?:rivals?|peers?|suppliers?|competitors?|partners?|customers?|unit|arm|subsidiary|assembler|contractor)\s+\p{Lu}/u;

/** The end of the first sentence (a longer text's headline): `.`, `!` or `?` before a capital, or a line break. */
function headlineEnd(text: string): number {
  const m = SENTENCE_END.exec(text);
  return m ? m.index + 1 : text.length;
}

/** A mention and its neighbours: the nearest mentions of another company before and after it. */
interface Neighbours {
  alone: boolean;
  prevOther: Mention | undefined;
  nextOther: Mention | undefined;
}

function mentionRole(
  text: string,
  m: Mention,
  n: Neighbours,
): Exclude<Role, 'subject' | 'co-subject' | 'body'> | undefined {
  const after = text.slice(m.end, m.end + 80);
  const before = text.slice(Math.max(0, m.start - 40), m.start);
  const alone = n.alone;
  if (alone) {
    if (RATING_ALONE.test(after) && RATING_WORDS.test(after.slice(0, 120))) return 'rating';
    if (OWN_ANALYSTS.test(after) || SOURCE_FINDS.test(after)) return 'source';
    if (/,\s*$/.test(before) && SOURCE_AFTER_COMMA.test(after.split(/[\n]/)[0]!)) return 'source';
    if (APPOSITION_UNKNOWN.test(after)) return 'passing';
    return undefined;
  }
  // Only a company of the same sentence makes this one a broker or a source; past the nearest, none can be.
  const sameSentence = (from: number, to: number) => !SENTENCE_END.test(text.slice(from, to + 1));
  const next = n.nextOther && sameSentence(m.end, n.nextOther.start) ? n.nextOther : undefined;
  const prevOther = n.prevOther && sameSentence(n.prevOther.end, m.start) ? n.prevOther : undefined;
  const rated = next !== undefined;
  const ratedBefore = prevOther !== undefined;
  if (next && RATING_VERB.test(text.slice(m.end, next.start)) && RATING_WORDS.test(text.slice(m.end, m.end + 120)))
    return 'rating';
  if (ratedBefore && RATING_BY.test(before) && RATING_WORDS.test(text.slice(0, m.start))) return 'rating';
  if (SOURCE_BEFORE.test(before)) return 'source';
  if (rated && SOURCE_VERB.test(after)) return 'source';
  if (ratedBefore && /,\s*$/.test(before) && SOURCE_AFTER_COMMA.test(after.split(/[\n]/)[0]!)) return 'source';
  if (PASSING_AFTER.test(after)) return 'passing';
  if (next && APPOSITION.test(text.slice(m.end, next.start))) return 'passing';
  const apposition = prevOther !== undefined && APPOSITION.test(text.slice(prevOther.end, m.start));
  if (!apposition && PASSING_BEFORE.test(before)) return 'passing';
  return undefined;
}

/** Each company's role and relevance by symbol (`mentions` in text order); its best mention decides. */
export function tickerRelevance(text: string, mentions: readonly Mention[]): Map<string, Relevance> {
  const end = headlineEnd(text);
  const best = new Map<string, Relevance>();
  const plain: string[] = [];
  const bodyCount = new Map<string, number>();
  const read = mentions.slice(0, MENTIONS_READ);
  const alone = new Set(read.map((x) => x.ticker)).size === 1;
  read.forEach((m, i) => {
    let j = i - 1;
    while (j >= 0 && read[j]!.ticker === m.ticker) j--;
    let k = i + 1;
    while (k < read.length && read[k]!.ticker === m.ticker) k++;
    const role = mentionRole(text, m, { alone, prevOther: read[j], nextOther: read[k] });
    if (role === undefined) {
      if (m.start < end) {
        if (!plain.includes(m.ticker)) plain.push(m.ticker);
      } else bodyCount.set(m.ticker, (bodyCount.get(m.ticker) ?? 0) + 1);
      return;
    }
    const r = ROLE_RELEVANCE[role];
    const prev = best.get(m.ticker);
    if (!prev || prev.relevance < r) best.set(m.ticker, { role, relevance: r });
  });
  for (const [ticker, n] of bodyCount) {
    const r = n >= 2 ? BODY_REPEATED : BODY_ONCE;
    const prev = best.get(ticker);
    if (!prev || prev.relevance < r) best.set(ticker, { role: 'body', relevance: r });
  }
  plain.forEach((ticker, i) => {
    const role = i === 0 ? 'subject' : 'co-subject';
    best.set(ticker, { role, relevance: ROLE_RELEVANCE[role] });
  });
  // No company written plainly in the headline: the company a broker rates or the body's most named leads.
  if (plain.length === 0 && best.size > 0) {
    const lead = [...best.entries()].sort((a, b) => b[1].relevance - a[1].relevance)[0]!;
    if (lead[1].role === 'body') best.set(lead[0], { role: 'subject', relevance: ROLE_RELEVANCE.subject });
  }
  return best;
}
