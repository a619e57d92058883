/** Background workers besides the stream: source poller and webhook dispatcher, leased per source / endpoint. */
import type { Log } from '../domain/log.js';
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
  log: Log;
  metrics: Metrics;
}

/** Sources: polled here too (and by any `fns sources run`); `onStored` after a poll stored articles. */
export async function startPoller(
  deps: WorkerDeps & { onStored: () => void; logger?: OpsLogger },
): Promise<SourcePoller> {
  const { config, store, clock, log, metrics, onStored } = deps;
  const poller = new SourcePoller({
    store: store.sources,
    userAgent: pollerUserAgent(config.brand),
    allowPrivate: config.feedAllowPrivate,
    clock,
    log: log.child({ component: 'sources' }),
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
    log: log.child({ component: 'webhooks' }),
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
