/** Enrichment of one item, pure and deterministic: tickers (most relevant first), sentiment, urgency. */
import { articleRules, type ArticleSentiment, type TickerSentiment, type Urgency } from '../contract/index.js';
import { byRelevance } from '../domain/articles.js';
import { learnedSentiment } from './learned.js';
import { tickerRelevance } from './relevance.js';
import { articleMentions } from './tickers.js';
import { urgencyFor, type UrgencySetting } from './urgency.js';

export type { UrgencySetting } from './urgency.js';
export { tickerRelevance } from './relevance.js';
export { articleMentions, explainMentions, findTickers } from './tickers.js';

export interface Enrichment {
  tickers: TickerSentiment[];
  sentiment: ArticleSentiment;
  urgency: Urgency;
}

/** Builds the name index and loads the models up front, so the first article stored does not wait for them. */
export function warmEnrichment(): void {
  enrich('Apple Inc. (NASDAQ: AAPL) shares rose 2% after the iPhone maker beat estimates; $MSFT fell.');
}

export function enrich(content: string, opts: { urgency?: UrgencySetting } = {}): Enrichment {
  const mentions = articleMentions(content);
  const { article, tickers: labels } = learnedSentiment(content, mentions);
  const relevance = tickerRelevance(content, mentions);
  const tickers: TickerSentiment[] = [];
  const seen = new Set<string>();
  for (const m of mentions) {
    if (seen.has(m.ticker)) continue;
    seen.add(m.ticker);
    tickers.push({
      ticker: m.ticker,
      sentiment: labels.get(m.ticker) ?? 'neutral',
      relevance: relevance.get(m.ticker)?.relevance ?? 1,
    });
  }
  return {
    tickers: byRelevance(tickers).slice(0, articleRules.tickersMaxItems),
    sentiment: article,
    urgency: urgencyFor(content, opts.urgency),
  };
}
