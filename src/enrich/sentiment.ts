/**
 * The finance lexicon's reading of a headline (resources/lexicon.ts): features for the learned models (learned.ts)
 * and the `npm run eval:enrich` baseline. Deterministic:
 *  - words and phrases carry weights (`beats estimates` +2); verb + object rules (`cuts guidance` -);
 *  - a negator (`not`, `fails to`, `n't`) up to three words before a cue flips it;
 *  - clauses split at `,` `;` `but` `as` `despite` ...; after `but`/`however` weighs more, `despite` less;
 *  - a ticker takes its clause's sign (a names-only clause takes the next one's), else the unnamed clauses';
 *  - the article is `hawkish`/`dovish` when about monetary policy and the policy cues lean one way, else the sign.
 */
import type { ArticleSentiment, TickerSentimentLabel } from '../contract/index.js';
import { firstIndex } from '../domain/sorted.js';
import {
  CONTRAST,
  CONCESSIVE,
  HAWKISH,
  DOVISH,
  NEGATORS,
  OBJECT_RULES,
  PHRASES,
  POLICY_ACTOR_WORDS,
  POLICY_ACTORS,
  POLICY_TERMS,
  WORDS,
  stem,
} from './resources/lexicon.js';
import type { Mention } from './tickers.js';
import type { RuleScores } from './model.js';

interface Tok {
  stem: string;
  word: string;
  start: number;
  end: number;
}

const WORD = /[\p{L}\p{N}]+(?:['.\-][\p{L}\p{N}]+)*|[;:,]|%|—|–/gu;

function tokens(text: string): Tok[] {
  const out: Tok[] = [];
  for (const m of text.replace(/[’‘`]/g, "'").matchAll(WORD)) {
    let word = m[0].toLowerCase();
    // `don't` -> `don` + negation, `won't` -> `won` + negation.
    if (word.endsWith("n't")) {
      out.push({
        stem: stem(word.slice(0, -3)),
        word: word.slice(0, -3),
        start: m.index,
        end: m.index + m[0].length - 3,
      });
      word = 'not';
      out.push({ stem: 'not', word, start: m.index + m[0].length - 3, end: m.index + m[0].length });
      continue;
    }
    out.push({ stem: stem(word), word, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

interface Clause {
  from: number; // token index, inclusive
  to: number; // exclusive
  weight: number;
  general: number;
  hawk: number;
  dove: number;
}

const BOUNDARY_WORDS = new Set([
  'but',
  'while',
  'whereas',
  'as',
  'after',
  'despite',
  'though',
  'although',
  'however',
  'yet',
  'amid',
  'even',
]);

function clauses(toks: Tok[]): Clause[] {
  const out: Clause[] = [];
  let from = 0;
  let weight = 1;
  const close = (to: number, nextWeight: number) => {
    if (to > from) out.push({ from, to, weight, general: 0, hawk: 0, dove: 0 });
    from = to;
    weight = nextWeight;
  };
  for (let i = 0; i < toks.length; i++) {
    const w = toks[i]!.word;
    if (w === ',' || w === ';' || w === ':' || w === '—' || w === '–') {
      close(i, 1);
      from = i + 1;
    } else if (BOUNDARY_WORDS.has(w) && i > 0) {
      // `even as` is one boundary; `as well as` and `such as` are not boundaries.
      if (
        w === 'as' &&
        (toks[i - 1]!.word === 'even' ||
          toks[i - 1]!.word === 'such' ||
          toks[i - 1]!.word === 'well' ||
          toks[i + 1]?.word === 'well' ||
          toks[i + 1]?.word === 'much' ||
          toks[i + 1]?.word === 'many' ||
          toks[i + 1]?.word === 'high' ||
          toks[i + 1]?.word === 'low')
      )
        continue;
      if (w === 'even' && toks[i + 1]?.word !== 'as' && toks[i + 1]?.word !== 'though') continue;
      close(i, CONTRAST.has(w) ? 1.5 : CONCESSIVE.has(w) ? 0.5 : 1);
    }
  }
  close(toks.length, 1);
  return out;
}

/** Scores each clause: general polarity and policy lean. */
function score(toks: Tok[], cl: Clause): void {
  let negateUntil = -1;
  for (let i = cl.from; i < cl.to; i++) {
    const t = toks[i]!;
    const sign = i <= negateUntil ? -1 : 1;
    // Longest phrase first (three, then two words), then a negator, then verb + object, then the word.
    let matched = 0;
    for (const len of [3, 2]) {
      if (i + len > cl.to) continue;
      const key = toks
        .slice(i, i + len)
        .map((x) => x.stem)
        .join(' ');
      const p = PHRASES.get(key);
      if (p) {
        if (p.negates) negateUntil = i + len - 1 + 4;
        cl.general += sign * (p.general ?? 0);
        cl.hawk += sign > 0 ? (p.hawk ?? 0) : (p.dove ?? 0);
        cl.dove += sign > 0 ? (p.dove ?? 0) : (p.hawk ?? 0);
        matched = len;
        break;
      }
    }
    if (matched) {
      i += matched - 1;
      continue;
    }
    if (NEGATORS.has(t.word) || NEGATORS.has(t.stem)) {
      negateUntil = i + 3;
      continue;
    }
    const rules = OBJECT_RULES.get(t.stem);
    if (rules) {
      let hit = false;
      for (let j = i + 1; j < Math.min(cl.to, i + 5) && !hit; j++) {
        const r = rules.get(toks[j]!.stem);
        if (r) {
          cl.general += sign * (r.general ?? 0);
          cl.hawk += sign > 0 ? (r.hawk ?? 0) : (r.dove ?? 0);
          cl.dove += sign > 0 ? (r.dove ?? 0) : (r.hawk ?? 0);
          hit = true;
          i = j;
        }
      }
      if (hit) continue;
    }
    const w = WORDS.get(t.stem) ?? WORDS.get(t.word);
    if (w !== undefined) cl.general += sign * w;
    if (HAWKISH.has(t.stem)) {
      if (sign > 0) cl.hawk += 1;
      else cl.dove += 1;
    }
    if (DOVISH.has(t.stem)) {
      if (sign > 0) cl.dove += 1;
      else cl.hawk += 1;
    }
  }
}

export interface SentimentResult {
  article: Exclude<ArticleSentiment, null>;
  tickers: Map<string, TickerSentimentLabel>;
}

const label = (x: number): TickerSentimentLabel => (x > 0 ? 'positive' : x < 0 ? 'negative' : 'neutral');

function isPolicy(toks: Tok[]): boolean {
  for (let i = 0; i < toks.length; i++) {
    const one = toks[i]!.stem;
    const two = i + 1 < toks.length ? `${one} ${toks[i + 1]!.stem}` : '';
    const three = i + 2 < toks.length ? `${two} ${toks[i + 2]!.stem}` : '';
    if (
      POLICY_ACTOR_WORDS.has(toks[i]!.word) ||
      POLICY_ACTORS.has(two) ||
      POLICY_ACTORS.has(three) ||
      POLICY_TERMS.has(two) ||
      POLICY_TERMS.has(three)
    )
      return true;
  }
  return false;
}

/** Article label and per-ticker labels for the given mentions. */
export function analyse(text: string, mentions: Mention[]): SentimentResult {
  const toks = tokens(text);
  const cls = clauses(toks);
  for (const cl of cls) score(toks, cl);
  const policy = isPolicy(toks);
  let total = 0;
  let hawk = 0;
  let dove = 0;
  for (const cl of cls) {
    total += cl.weight * cl.general;
    hawk += cl.weight * cl.hawk;
    dove += cl.weight * cl.dove;
  }
  let article: Exclude<ArticleSentiment, null>;
  if (policy && hawk !== dove) article = hawk > dove ? 'hawkish' : 'dovish';
  else article = total > 0 ? 'positive' : total < 0 ? 'negative' : 'neutral';

  const clauseOf = (offset: number) =>
    cls.findIndex(
      (c) => toks[c.from] && toks[c.from]!.start <= offset && (c.to >= toks.length || toks[c.to]!.start > offset),
    );
  const named = new Set<number>();
  const mentionClauses = mentions.map((m) => {
    const idx = clauseOf(m.start);
    if (idx >= 0) named.add(idx);
    return idx;
  });
  const nameOnly = (idx: number) => {
    const c = cls[idx]!;
    if (c.general !== 0) return false;
    for (let i = c.from; i < c.to; i++) {
      const t = toks[i]!;
      if (mentions.some((m) => t.start >= m.start && t.end <= m.end + 2)) continue;
      if (['and', '&', 'or', 'shares', 'stock', 'of', 's', 'the', 'inc', 'corp', 'plc'].includes(t.word)) continue;
      return false;
    }
    return true;
  };
  let unnamed = 0;
  cls.forEach((c, idx) => {
    if (!named.has(idx)) unnamed += c.weight * c.general;
  });
  const tickers = new Map<string, TickerSentimentLabel>();
  mentions.forEach((m, k) => {
    if (tickers.has(m.ticker) && tickers.get(m.ticker) !== 'neutral') return;
    let idx = mentionClauses[k]!;
    while (idx >= 0 && idx + 1 < cls.length && nameOnly(idx)) idx++;
    const own = idx >= 0 ? cls[idx]!.general : 0;
    tickers.set(m.ticker, label(own !== 0 ? own : unnamed));
  });
  return { article, tickers };
}

/** The lexicon's scores of the whole text and of each mention's clause (model features). */
export function lexiconScores(
  text: string,
  mentions: readonly Mention[],
): { whole: RuleScores; clauses: RuleScores[] } {
  const toks = tokens(text);
  const cls = clauses(toks);
  for (const cl of cls) score(toks, cl);
  const policy = isPolicy(toks);
  const whole: RuleScores = { general: 0, hawk: 0, dove: 0, policy, contrast: 0 };
  for (const cl of cls) {
    if (cl.weight > 1) whole.contrast! += cl.general;
    whole.general += cl.weight * cl.general;
    whole.hawk += cl.weight * cl.hawk;
    whole.dove += cl.weight * cl.dove;
  }
  const clauseScores = mentions.map((m) => {
    // Clauses run in order, so the first to end after the mention is found by halving (a list of thousands of
    // names has thousands of clauses); it holds the mention when it starts at or before it.
    const c = cls[firstIndex(cls, (x) => x.to >= toks.length || toks[x.to]!.start > m.start)];
    const cl = c && toks[c.from] !== undefined && toks[c.from]!.start <= m.start ? c : undefined;
    return cl
      ? { general: cl.general, hawk: cl.hawk, dove: cl.dove, policy }
      : { general: 0, hawk: 0, dove: 0, policy };
  });
  return { whole, clauses: clauseScores };
}
