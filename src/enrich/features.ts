/** The models' inputs for one text, made the same way by training (scripts/train-sentiment.ts) and learned.ts. */
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
  // Only the first `tickersMaxItems` companies (all an article carries) are read: the cost is bounded.
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
      tickers.set(ticker, tickerFeatures(line, spans, others, scores.clauses[first]!));
    }
  }
  return { article: articleFeatures(text, scores.whole), policy: scores.whole.policy, tickerShared, tickers };
}
