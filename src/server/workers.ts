/**
 * The background workers of the service besides the stream: the source poller and the webhook
 * dispatcher (each leased per source / endpoint, so several instances share the work).
 */
import type { Config } from '../config/index.js';
import type { OpsLogger } from '../ops/logger.js';
import type { Metrics } from '../ops/metrics.js';
import { pollerUserAgent, SourcePoller } from '../sources/poller.js';
import type { Store, WakeSubscription } from '../store/ports/index.js';
import { SecretBox, WebhookDispatcher } from '../webhooks/index.js';
import { WOKEN_FEED_POLL_MS } from './changes.js';

interface WorkerDeps {
  config: Config;
  store: Store;
  clock: () => number;
  log: (m: string) => void;
  metrics: Metrics;
}

/** Sources: polled here too (and by any `fns sources run`); `onStored` after a poll stored articles. */
export async function startPoller(
  deps: WorkerDeps & { onStored: () => void; logger?: OpsLogger },
): Promise<SourcePoller> {
  const { config, store, clock, log, metrics, onStored, logger } = deps;
  // A poll or an item that failed unexpectedly is a structured warning (its error's class, never its message).
  const warn = logger ? (fields: Record<string, unknown>, msg: string) => logger.pino.warn(fields, msg) : undefined;
  const poller = new SourcePoller({
    store: store.sources,
    userAgent: pollerUserAgent(config.brand),
    allowPrivate: config.feedAllowPrivate,
    clock,
    log,
    ...(warn ? { warn } : {}),
    metrics,
    onStored,
  });
  await poller.start();
  return poller;
}

/** Webhooks: one more reader of the feed (its own, so a slow endpoint never holds the stream back). */
export async function startWebhooks(
  deps: WorkerDeps & { logger: OpsLogger; feedWake: WakeSubscription | undefined },
): Promise<WebhookDispatcher> {
  const { config, store, clock, log, metrics, logger, feedWake } = deps;
  const webhooks = new WebhookDispatcher({
    store,
    secrets: new SecretBox(config.webhookSecretsKey),
    allowPrivate: config.webhookAllowPrivate,
    recheckMs: config.streamRecheckMs,
    clock,
    ...(feedWake ? { feedWake, feedPollMs: WOKEN_FEED_POLL_MS } : {}),
    log,
    onAttempt: (e) => {
      metrics.webhookAttempts.inc({ outcome: e.outcome });
      if (e.outcome === 'delivered') metrics.webhookDeliveryLag.observe(e.ageSeconds);
      const fields = {
        kind: 'webhook',
        endpoint_id: e.endpointId,
        webhook_id: e.webhookId,
        status: e.status,
        outcome: e.outcome,
        latency_ms: Math.round(e.latencyMs * 1000) / 1000,
        ...(e.error ? { error: e.error } : {}),
      };
      const msg = `webhook ${e.endpointId} ${e.status ?? '-'} ${e.outcome}`;
      if (e.outcome === 'delivered') logger.pino.info(fields, msg);
      else logger.pino.warn(fields, msg);
    },
  });
  await webhooks.start();
  metrics.collectFrom({ webhooks: () => webhooks.status() });
  return webhooks;
}
