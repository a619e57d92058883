/**
 * The model's inputs for one text, made the same way at training (scripts/train-sentiment.ts) and at run
 * time (learned.ts): the article's features, and per ticker the features with that company marked.
 */
import { articleFeatures, tickerFeatures, type Span } from './model.js';
import { lexiconScores } from './sentiment.js';
import type { Mention } from './tickers.js';

export interface ModelInputs {
  article: string[];
  /** The lexicon sees monetary policy (a central bank, policy makers or policy rates). */
  policy: boolean;
  /** Per ticker, in order of first mention. */
  tickers: Map<string, string[]>;
}

export function modelInputs(text: string, mentions: readonly Mention[]): ModelInputs {
  const scores = lexiconScores(text, mentions);
  const tickers = new Map<string, string[]>();
  mentions.forEach((m, i) => {
    if (tickers.has(m.ticker)) return;
    const target: Span[] = mentions.filter((x) => x.ticker === m.ticker);
    const others: Span[] = mentions.filter((x) => x.ticker !== m.ticker);
    // The clause of the company's first mention.
    tickers.set(m.ticker, tickerFeatures(text, target, others, scores.whole, scores.clauses[i]!));
  });
  return { article: articleFeatures(text, scores.whole), policy: scores.whole.policy, tickers };
}
