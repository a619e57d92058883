/** Fields derived when an ingested article leaves them out (docs/operations.md "Ingesting articles"): src/enrich. */
import type { ArticleSentiment, TickerSentiment, Urgency } from '../contract/index.js';
import { enrich, type Enrichment } from '../enrich/index.js';

export function deriveAll(content: string): Enrichment {
  return enrich(content);
}

export function deriveUrgency(content: string): Urgency {
  return enrich(content).urgency;
}

export function deriveSentiment(content: string): ArticleSentiment {
  return enrich(content).sentiment;
}

export function deriveTickers(content: string): TickerSentiment[] {
  return enrich(content).tickers;
}
