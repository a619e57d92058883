/**
 * The team's labelled headlines for ticker recognition and relevance (eval/tickers/*.jsonl, labelling guide
 * in eval/README.md): micro precision and recall of the symbols found, the share of headlines whose first
 * ticker is the one the story is about, and how well the default `min_relevance` keeps the companies a
 * story is about. Split dev/test by the text's SHA-256, as the sentiment corpus. Pure but for reading files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { minRelevanceDefault } from '../../src/contract/index.js';
import { articleMentions, enrich } from '../../src/enrich/index.js';
import { splitOf } from './sentiment-corpus.js';

export const HEADLINES_DIR = fileURLToPath(new URL('../../eval/tickers/', import.meta.url));

export type Role = 'rating' | 'source' | 'passing';

export interface Headline {
  file: string;
  text: string;
  /** Every listed company the line names, by symbol. */
  tickers: string[];
  /** The company the story is about (null: none). */
  about: string | null;
  /** Companies named beside the story: a broker's rating, a quoted source, a passing mention. */
  roles: Record<string, Role>;
  class: string;
  split: 'dev' | 'test';
}

/** Every headline of the set; a malformed line fails with its file and line number. */
export function readHeadlines(dir = HEADLINES_DIR): Headline[] {
  const out: Headline[] = [];
  const seen = new Set<string>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()) {
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .forEach((raw, i) => {
        if (raw.trim() === '') return;
        const o = JSON.parse(raw) as Partial<Headline>;
        const where = `${file}:${i + 1}`;
        if (typeof o.text !== 'string' || !Array.isArray(o.tickers))
          throw new Error(`${where}: needs text and tickers`);
        if (o.about != null && !o.tickers.includes(o.about))
          throw new Error(`${where}: about ${o.about} is not among its tickers`);
        if (seen.has(o.text)) return;
        seen.add(o.text);
        out.push({
          file,
          text: o.text,
          tickers: o.tickers,
          about: o.about ?? null,
          roles: o.roles ?? {},
          class: o.class ?? 'plain',
          split: splitOf(o.text),
        });
      });
  }
  return out;
}

export interface HeadlineScores {
  n: number;
  precision: number;
  recall: number;
  /** Headlines with an `about` company the matcher found: the share whose first ticker is it. */
  aboutFirst: number;
  /** The same with the tickers in order of first mention (the order before relevance). */
  aboutFirstByMention: number;
  aboutN: number;
  /**
   * The default filter against the labels: companies found with relevance >= the default vs those the story is about.
   */
  filterPrecision: number;
  filterRecall: number;
  /** Per class: recall and precision of the symbols. */
  classes: Map<string, { n: number; precision: number; recall: number }>;
  errors: string[];
}

const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);

export function scoreHeadlines(items: readonly Headline[]): HeadlineScores {
  let found = 0;
  let right = 0;
  let expected = 0;
  let aboutN = 0;
  let aboutFirst = 0;
  let aboutByMention = 0;
  let fFound = 0;
  let fRight = 0;
  let fExpected = 0;
  const perClass = new Map<string, { found: number; right: number; expected: number; n: number }>();
  const errors: string[] = [];
  for (const h of items) {
    const got = enrich(h.text).tickers;
    const symbols = got.map((t) => t.ticker);
    const want = new Set(h.tickers);
    const hits = symbols.filter((s) => want.has(s)).length;
    found += symbols.length;
    right += hits;
    expected += want.size;
    const c = perClass.get(h.class) ?? { found: 0, right: 0, expected: 0, n: 0 };
    c.found += symbols.length;
    c.right += hits;
    c.expected += want.size;
    c.n++;
    perClass.set(h.class, c);
    if (hits !== symbols.length || hits !== want.size)
      errors.push(`${h.file}: want [${h.tickers.join(',')}] got [${symbols.join(',')}]  ${h.text}`);
    if (h.about !== null && symbols.includes(h.about)) {
      aboutN++;
      if (symbols[0] === h.about) aboutFirst++;
      else errors.push(`${h.file}: about ${h.about} but first ${symbols[0]}  ${h.text}`);
      const byMention = [...new Set(articleMentions(h.text).map((m) => m.ticker))];
      if (byMention[0] === h.about) aboutByMention++;
    }
    // The companies the story is about: every labelled ticker without a role beside the story.
    const aboutSet = new Set(h.tickers.filter((t) => h.roles[t] === undefined));
    const kept = got.filter((t) => t.relevance >= minRelevanceDefault && want.has(t.ticker)).map((t) => t.ticker);
    fFound += kept.length;
    fRight += kept.filter((t) => aboutSet.has(t)).length;
    fExpected += [...aboutSet].filter((t) => symbols.includes(t)).length;
  }
  const classes = new Map(
    [...perClass].map(([k, v]) => [
      k,
      { n: v.n, precision: ratio(v.right, v.found), recall: ratio(v.right, v.expected) },
    ]),
  );
  return {
    n: items.length,
    precision: ratio(right, found),
    recall: ratio(right, expected),
    aboutFirst: ratio(aboutFirst, aboutN),
    aboutFirstByMention: ratio(aboutByMention, aboutN),
    aboutN,
    filterPrecision: ratio(fRight, fFound),
    filterRecall: ratio(fRight, fExpected),
    classes,
    errors,
  };
}

export function headlineReport(s: HeadlineScores): string[] {
  const p = (x: number) => x.toFixed(3);
  return [
    `    symbols: micro precision ${p(s.precision)}, recall ${p(s.recall)} (goal 0.95 / 0.90)  [${s.n} headlines]`,
    `    "about" company first: ${p(s.aboutFirst)} by relevance, ${p(s.aboutFirstByMention)} in order of mention (goal 0.90)  [${s.aboutN} headlines whose about company is found]`,
    `    default min_relevance (${minRelevanceDefault}) against the labels: keeps the companies a story is about with precision ${p(s.filterPrecision)}, recall ${p(s.filterRecall)}`,
    '    per class (precision / recall):',
    ...[...s.classes]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([k, v]) => `      ${k.padEnd(17)} ${p(v.precision)} / ${p(v.recall)}  [${v.n}]`),
  ];
}
