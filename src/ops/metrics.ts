/**
 * Prometheus metrics of one instance, on its own Registry (several per process stay apart). Labels are bounded:
 * an OperationId or `none`, an HTTP status, the unions below; never a key, key id, account or address.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type Dependency = 'database' | 'redis' | 'embedder';
/** The shared-state ports that fall back to the instance's memory when Redis is unreachable. */
export type SharedStatePort = 'rate_limiter' | 'ip_guard' | 'stream_slots';

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event-loop lag, GC, handles) under their standard names. Default true. */
  defaultMetrics?: boolean;
}

/** Sources read when `/metrics` is scraped (bound once the service has built them). */
export interface MetricSources {
  openStreams?: () => number;
  /** Articles waiting for their embedding. */
  embeddingQueueLength?: () => Promise<number>;
  /** Newest `seq` in the store's change feed. */
  latestSeq?: () => Promise<number>;
  /** The stream's position in the change feed: every article up to it has been handed to the clients. */
  feedCursor?: () => number;
  /** The webhook endpoints this instance delivers: backlog (articles after the cursor) and oldest undelivered age. */
  webhooks?: () => Promise<{ id: string; backlog: number; oldestUndeliveredSeconds: number | null }[]>;
}

export interface Metrics {
  readonly registry: Registry;
  readonly contentType: string;
  /** Label `operation` (OperationId or `none`), `status` (HTTP status). */
  requests: { inc(labels: { operation: string; status: number }): void };
  /** Seconds from the first byte of the request to the end of the response, by operation. */
  requestDuration: { observe(labels: { operation: string }, seconds: number): void };
  rateLimitRefusals: { inc(labels: { operation: string }): void };
  ipBlocks: { inc(): void };
  streamRefusals: { inc(labels: { code: number }): void };
  /** Seconds from an article's `received_at` to the moment it is written to the clients. */
  deliveryLag: { observe(seconds: number): void };
  dependencyErrors: { inc(labels: { dependency: Dependency }): void };
  sharedStateFallbacks: { inc(labels: { port: SharedStatePort }): void };
  /** TCP connections refused at a cap of the partner listener (`total` or `per_address`), answered 503. */
  connectionRefusals: { inc(labels: { cap: 'total' | 'per_address' }): void };
  /** Source polls by outcome (`ok`, `not_modified`, an error kind, `store`, `aborted`): src/sources/poll-record.ts. */
  sourcePolls: { inc(labels: { outcome: string }): void };
  /**
   * Items read from sources by outcome (`stored`, `same_item`, `same_url`, `same_headline`, `near_duplicate`,
   * `unusable`, `failed`).
   */
  sourceItems: { inc(labels: { outcome: string }, n: number): void };
  /** Webhook attempts by outcome (`delivered`, `failed`, `disabled`, `paused`): src/webhooks. */
  webhookAttempts: { inc(labels: { outcome: string }): void };
  /** Seconds from an article's `received_at` to its delivery (2xx) to one endpoint. */
  webhookDeliveryLag: { observe(seconds: number): void };
  /** Sets (or replaces) the callbacks read on scrape. */
  collectFrom(sources: MetricSources): void;
  render(): Promise<string>;
}

const PREFIX = 'fns_';

/** Latency buckets (seconds): sub-millisecond REST reads up to slow searches. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Delivery lag buckets (seconds): the goal is well under 1 s from receipt to the client. */
export const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  let sources: MetricSources = {};

  const requests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'REST requests answered, by operation (none: no route matched) and HTTP status.',
    labelNames: ['operation', 'status'] as const,
    registers: [registry],
  });
  const requestDuration = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'REST request latency in seconds, by operation.',
    labelNames: ['operation'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const rateLimitRefusals = new Counter({
    name: `${PREFIX}rate_limit_refusals_total`,
    help: 'Requests refused with 429 by the per-key rate limit, by operation.',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  const ipBlocks = new Counter({
    name: `${PREFIX}ip_blocks_total`,
    help: 'Client addresses blocked by the IP guard (too many different keys).',
    registers: [registry],
  });
  const streamRefusals = new Counter({
    name: `${PREFIX}stream_refusals_total`,
    help: 'Stream connections refused at admission, by WebSocket close code.',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  new Gauge({
    name: `${PREFIX}stream_open_connections`,
    help: 'Open, admitted stream connections on this instance.',
    registers: [registry],
    collect() {
      if (sources.openStreams) this.set(sources.openStreams());
    },
  });
  const deliveryLag = new Histogram({
    name: `${PREFIX}stream_delivery_lag_seconds`,
    help: "Seconds from an article's received_at to its write to the stream clients.",
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: `${PREFIX}stream_feed_lag_articles`,
    help: 'Articles in the change feed not yet handed to the stream clients (newest seq minus the stream cursor).',
    registers: [registry],
    async collect() {
      const { latestSeq, feedCursor } = sources;
      if (!latestSeq || !feedCursor) return;
      try {
        this.set(Math.max(0, (await latestSeq()) - feedCursor()));
      } catch {
        dependencyErrors.inc({ dependency: 'database' });
      }
    },
  });
  new Gauge({
    name: `${PREFIX}embedding_queue_length`,
    help: 'Articles waiting for their embedding.',
    registers: [registry],
    async collect() {
      if (!sources.embeddingQueueLength) return;
      try {
        this.set(await sources.embeddingQueueLength());
      } catch {
        dependencyErrors.inc({ dependency: 'database' });
      }
    },
  });
  const dependencyErrors = new Counter({
    name: `${PREFIX}dependency_errors_total`,
    help: 'Failed calls to a dependency (database, redis, embedder).',
    labelNames: ['dependency'] as const,
    registers: [registry],
  });
  const sharedStateFallbacks = new Counter({
    name: `${PREFIX}shared_state_fallbacks_total`,
    help: "Decisions taken by the instance's in-memory state because the shared state (Redis) was unreachable, by port.",
    labelNames: ['port'] as const,
    registers: [registry],
  });
  const connectionRefusals = new Counter({
    name: `${PREFIX}connection_refusals_total`,
    help: 'TCP connections refused (503 + Retry-After, closed) at a cap of the partner listener: total (MAX_CONNECTIONS) or per_address (MAX_CONNECTIONS_PER_ADDRESS).',
    labelNames: ['cap'] as const,
    registers: [registry],
  });
  const sourcePolls = new Counter({
    name: `${PREFIX}source_polls_total`,
    help: 'Source polls by outcome: ok, not_modified (304), an error kind (http, timeout, network, parse, charset, too_large, redirects, refused), store (our side failed), aborted, internal (the poll failed through a fault of the service).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const sourceItems = new Counter({
    name: `${PREFIX}source_items_total`,
    help: 'Items read from sources by outcome: stored, same_item (already stored from that source), same_url, same_headline (the same source repeating a headline and time), near_duplicate, unusable (no text; counted the first time it is offered), failed (an unexpected error of the service; the other items were stored).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // Every dependency and port shows up (at 0) from the first scrape, so alerts on rate() work at once.
  for (const dependency of ['database', 'redis', 'embedder'] as const) dependencyErrors.inc({ dependency }, 0);
  for (const port of ['rate_limiter', 'ip_guard', 'stream_slots'] as const) sharedStateFallbacks.inc({ port }, 0);
  for (const cap of ['total', 'per_address'] as const) connectionRefusals.inc({ cap }, 0);
  const webhookAttempts = new Counter({
    name: `${PREFIX}webhook_attempts_total`,
    help: 'Webhook requests sent, by outcome: delivered (2xx), failed (retried), disabled (410), paused (gave up after 24 h).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['delivered', 'failed', 'disabled', 'paused']) webhookAttempts.inc({ outcome }, 0);
  const webhookDeliveryLag = new Histogram({
    name: `${PREFIX}webhook_delivery_lag_seconds`,
    help: "Seconds from an article's received_at to its delivery (2xx) to one webhook endpoint.",
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: `${PREFIX}webhook_backlog_articles`,
    help: "Articles in the change feed after a webhook endpoint's cursor, per endpoint this instance delivers.",
    labelNames: ['endpoint'],
    registers: [registry],
    async collect() {
      if (!sources.webhooks) return;
      this.reset();
      for (const e of await sources.webhooks()) this.set({ endpoint: e.id }, e.backlog);
    },
  });
  new Gauge({
    name: `${PREFIX}webhook_oldest_undelivered_seconds`,
    help: 'Age of the oldest article a webhook endpoint of this instance has not yet received (0 when none waits).',
    registers: [registry],
    async collect() {
      if (!sources.webhooks) return;
      const ages = (await sources.webhooks()).map((e) => e.oldestUndeliveredSeconds ?? 0);
      this.set(ages.length ? Math.max(...ages) : 0);
    },
  });

  // Children per label pair, so the request path does not build a label key per request.
  const requestChildren = new Map<string, Counter.Internal>();
  const durationChildren = new Map<string, Histogram.Internal<'operation'>>();

  return {
    registry,
    contentType: registry.contentType,
    requests: {
      inc({ operation, status }) {
        const k = `${operation} ${status}`;
        let child = requestChildren.get(k);
        if (!child) requestChildren.set(k, (child = requests.labels(operation, String(status))));
        child.inc();
      },
    },
    requestDuration: {
      observe({ operation }, seconds) {
        let child = durationChildren.get(operation);
        if (!child) durationChildren.set(operation, (child = requestDuration.labels(operation)));
        child.observe(seconds);
      },
    },
    rateLimitRefusals: { inc: ({ operation }) => rateLimitRefusals.inc({ operation }) },
    ipBlocks: { inc: () => ipBlocks.inc() },
    streamRefusals: { inc: ({ code }) => streamRefusals.inc({ code: String(code) }) },
    deliveryLag: { observe: (seconds) => deliveryLag.observe(seconds) },
    dependencyErrors: { inc: ({ dependency }) => dependencyErrors.inc({ dependency }) },
    sharedStateFallbacks: { inc: ({ port }) => sharedStateFallbacks.inc({ port }) },
    connectionRefusals: { inc: ({ cap }) => connectionRefusals.inc({ cap }) },
    sourcePolls: { inc: ({ outcome }) => sourcePolls.inc({ outcome }) },
    sourceItems: { inc: ({ outcome }, n) => sourceItems.inc({ outcome }, n) },
    webhookAttempts: { inc: ({ outcome }) => webhookAttempts.inc({ outcome }) },
    webhookDeliveryLag: { observe: (seconds) => webhookDeliveryLag.observe(seconds) },
    collectFrom(s) {
      sources = { ...sources, ...s };
    },
    render: () => registry.metrics(),
  };
}
