/**
 * Sentiment on the team's corpus (eval/sentiment/): the learned model (src/enrich/learned.ts) against the
 * lexicon rules alone (src/enrich/sentiment.ts `analyse`) and the always-`neutral` line, on one split.
 */
import { learnedSentiment } from '../../src/enrich/learned.js';
import { analyse } from '../../src/enrich/sentiment.js';
import { articleMentions } from '../../src/enrich/tickers.js';
import { confusionLines, score, type Scores } from './classification.js';
import { ARTICLE_LABELS, TICKER_LABELS, type CorpusItem } from './sentiment-corpus.js';

export interface SentimentRow {
  name: string;
  article: Scores;
  press: Scores;
  stance: Scores;
  ticker: Scores;
}

type Answer = { article: string; tickers: Map<string, string> };

function rowFor(name: string, items: readonly CorpusItem[], answer: (text: string) => Answer): SentimentRow {
  const article: { want: string; got: string }[] = [];
  const press: { want: string; got: string }[] = [];
  const stance: { want: string; got: string }[] = [];
  const ticker: { want: string; got: string }[] = [];
  for (const it of items) {
    const a = answer(it.text);
    article.push({ want: it.label, got: a.article });
    if (it.genre === 'press') press.push({ want: it.label, got: a.article });
    if (it.genre === 'central-bank') stance.push({ want: it.label, got: a.article });
    for (const [sym, want] of it.tickers) {
      const got = a.tickers.get(sym);
      if (got !== undefined) ticker.push({ want, got });
    }
  }
  return {
    name,
    article: score(article, ARTICLE_LABELS),
    press: score(press, ARTICLE_LABELS),
    stance: score(stance, ['hawkish', 'dovish', 'neutral', 'positive', 'negative']),
    ticker: score(ticker, TICKER_LABELS),
  };
}

export function evaluateSentiment(items: readonly CorpusItem[]): SentimentRow[] {
  return [
    rowFor('model', items, (t) => learnedSentiment(t, articleMentions(t))),
    rowFor('lexicon', items, (t) => analyse(t, articleMentions(t))),
    rowFor('always neutral', items, (t) => ({
      article: 'neutral',
      tickers: new Map(articleMentions(t).map((m) => [m.ticker, 'neutral'])),
    })),
  ];
}

const f = (x: number) => x.toFixed(3);

/** The table of one split, the model's confusion matrices below it. */
export function sentimentReport(rows: readonly SentimentRow[]): string[] {
  const out = [
    `    ${''.padEnd(15)}${'article acc'.padStart(12)}${'macro-F1'.padStart(10)}${'press acc'.padStart(11)}${'macro-F1'.padStart(10)}${'stance wF1'.padStart(12)}${'ticker acc'.padStart(12)}${'macro-F1'.padStart(10)}`,
  ];
  for (const r of rows) {
    out.push(
      `    ${r.name.padEnd(15)}${f(r.article.accuracy).padStart(12)}${f(r.article.macroF1).padStart(10)}${f(r.press.accuracy).padStart(11)}${f(r.press.macroF1).padStart(10)}${f(r.stance.weightedF1).padStart(12)}${f(r.ticker.accuracy).padStart(12)}${f(r.ticker.macroF1).padStart(10)}`,
    );
  }
  const m = rows[0]!;
  out.push(
    `    n: article ${m.article.n}, press ${m.press.n}, stance ${m.stance.n}, ticker ${m.ticker.n} (tickers the directory finds)`,
  );
  out.push('    model, article label:', ...confusionLines(m.article, ARTICLE_LABELS, '      '));
  out.push(
    '    model, stance (central-bank lines):',
    ...confusionLines(m.stance, ['hawkish', 'dovish', 'neutral', 'positive', 'negative'], '      '),
  );
  out.push('    model, per ticker:', ...confusionLines(m.ticker, TICKER_LABELS, '      '));
  return out;
}
