/** One webhook message: its id, its body (the Article as presented for the tier) and its signed headers. */
import { randomBytes } from 'node:crypto';
import { webhookRules, type ArticleWebhook, type Tier } from '../contract/index.js';
import { presentArticle, type StoredArticle } from '../domain/articles.js';
import { planOf } from '../domain/tiers.js';

/** A new endpoint id: `wh_` and 16 hex digits (its random part ends every webhook-id of the endpoint). */
export function newEndpointId(): string {
  return `wh_${randomBytes(8).toString('hex')}`;
}

/** The same on every retry of one article to one endpoint, and different for every other pair. */
export function messageId(endpointId: string, articleId: string): string {
  return `msg_${articleId}${endpointId.replace(/^wh_/, '')}`;
}

/** The body; `timestamp` is the article's `received_at`, so every retry sends the same bytes. Tickers for max only. */
export function webhookBody(article: StoredArticle, tier: Tier): string {
  const payload: ArticleWebhook = {
    type: webhookRules.eventType,
    timestamp: article.received_at,
    data: presentArticle(article, planOf(tier).tickers),
  };
  return JSON.stringify(payload);
}
