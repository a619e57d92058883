/**
 * The model's inputs for one text, made the same way at training (scripts/train-sentiment.ts) and at run
 * time (learned.ts): the article's features, and per ticker the features with that company marked.
 */
import { articleRules } from '../contract/index.js';
import { articleFeatures, tickerFeatures, tickerText, type Span } from './model.js';
import { lexiconScores } from './sentiment.js';
import type { Mention } from './tickers.js';

export interface ModelInputs {
  article: string[];
  /** The lexicon sees monetary policy (a central bank, policy makers or policy rates). */
  policy: boolean;
  /** The ticker model's features every company of the line shares. */
  tickerShared: string[];
  /** Per ticker, in order of first mention: its own features (`tickerShared` goes with each). */
  tickers: Map<string, string[]>;
}

export function modelInputs(text: string, mentions: readonly Mention[]): ModelInputs {
  const scores = lexiconScores(text, mentions);
  const tickers = new Map<string, string[]>();
  // Each company's mentions, in order of its first; the first `tickersMaxItems` companies (all an article
  // carries) are read, so a line naming thousands costs no more than one naming a hundred.
  const byTicker = new Map<string, { spans: Span[]; first: number }>();
  mentions.forEach((m, i) => {
    const entry = byTicker.get(m.ticker);
    if (entry) entry.spans.push(m);
    else if (byTicker.size < articleRules.tickersMaxItems) byTicker.set(m.ticker, { spans: [m], first: i });
  });
  let tickerShared: string[] = [];
  if (byTicker.size > 0) {
    const line = tickerText(text, scores.whole);
    tickerShared = line.shared;
    for (const [ticker, { spans, first }] of byTicker) {
      const others = mentions.filter((x) => x.ticker !== ticker);
      // The clause of the company's first mention.
      tickers.set(ticker, tickerFeatures(line, spans, others, scores.clauses[first]!));
    }
  }
  return { article: articleFeatures(text, scores.whole), policy: scores.whole.policy, tickerShared, tickers };
}
