/**
 * MOCK_WEBHOOK_URL: a signed sample `article` webhook every few seconds (fresh id and times, as a max account sees
 * it) with the contract's public sandbox secret; any address, one at a time, failures logged, never retried.
 */
import { monotonicFactory } from 'ulid';
import { webhookRules, type Article } from '../contract/index.js';
import type { StoredArticle } from '../domain/articles.js';
import { resolveDestination, type Lookup } from '../webhooks/address.js';
import { messageId, webhookBody } from '../webhooks/message.js';
import { httpSender, type Sender } from '../webhooks/sender.js';
import { signedHeaders } from '../webhooks/signing.js';

export interface MockWebhooksOptions {
  url: string;
  intervalMs: number;
  examples: Article[];
  clock?: () => number;
  send?: Sender;
  lookup?: Lookup;
  log?: (m: string) => void;
}

/** The endpoint id of the mock's deliveries (webhook-ids end with it). */
const MOCK_ENDPOINT_ID = 'wh_5a4db0c0000000fe';

export interface MockWebhooks {
  /** Sends one now (also what the timer does). */
  sendOne(): Promise<{ status: number | null; error: string | null }>;
  close(): Promise<void>;
}

export function startMockWebhooks(opts: MockWebhooksOptions): MockWebhooks {
  const url = new URL(opts.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`MOCK_WEBHOOK_URL must be an http or https URL, got "${opts.url}"`);
  const clock = opts.clock ?? Date.now;
  const log = opts.log ?? (() => {});
  const ulid = monotonicFactory();
  let n = 0;
  let inFlight: Promise<unknown> | undefined;
  const sendOne = async () => {
    const now = clock();
    const ex = opts.examples[n++ % opts.examples.length]!;
    const at = new Date(now).toISOString();
    const article: StoredArticle = { ...ex, id: ulid(now), received_at: at, tickers: ex.tickers ?? [] };
    const body = webhookBody(article, 'max');
    const id = messageId(MOCK_ENDPOINT_ID, article.id);
    const headers = signedHeaders([webhookRules.sandboxSecret], id, Math.floor(now / 1000), body);
    try {
      const address = await resolveDestination(url, true, opts.lookup);
      const r = await (opts.send ?? httpSender)({ url, address, headers, body, timeoutMs: webhookRules.timeoutMs });
      log(
        `webhook ${id} → ${url.href}: ${r.status === null ? r.error : `HTTP ${r.status}`} in ${Math.round(r.latencyMs)} ms`,
      );
      return { status: r.status, error: r.error };
    } catch (e) {
      log(`webhook ${id} → ${url.href}: ${(e as Error).message}`);
      return { status: null, error: (e as Error).message };
    }
  };
  const timer = setInterval(() => {
    if (!inFlight) inFlight = sendOne().finally(() => (inFlight = undefined));
  }, opts.intervalMs);
  return {
    sendOne,
    async close() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
