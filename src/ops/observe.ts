/** Request, stream and embedder observers, to the logger and the metrics. */
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Caller } from '../auth/index.js';
import type { Embedder } from '../search/embedder.js';
import type { FeedEntry } from '../store/ports/index.js';
import type { OpsLogger } from './logger.js';
import { scrubKeys } from './logger.js';
import type { Metrics } from './metrics.js';

/** An incoming X-Request-Id is kept only if it is this short and this plain; otherwise one is made. */
const REQUEST_ID_SAFE = /^[A-Za-z0-9._:-]{1,64}$/;
/** Shaped like an API key of any brand (`…_live_…`, `…_test_…`): never kept, never logged. */
const KEY_LIKE = /_(live|test)_/i;

function acceptedRequestId(incoming: string | string[] | undefined): string | undefined {
  return typeof incoming === 'string' && REQUEST_ID_SAFE.test(incoming) && !KEY_LIKE.test(incoming)
    ? incoming
    : undefined;
}
const PATH_LOG_MAX = 128;

export interface RequestObserver {
  /** Mounted first in the REST app: request id, then one log line and the metrics when the response ends. */
  middleware: RequestHandler;
  /** Admission refused a request with 429 (rate limit). */
  rateLimited(operationId: string): void;
}

export function createRequestObserver(deps: { logger: OpsLogger; metrics: Metrics }): RequestObserver {
  const { logger, metrics } = deps;
  const done = (req: Request, res: Response, requestId: string, start: number): void => {
    const latencyMs = performance.now() - start;
    const locals = res.locals as { operationId?: string; caller?: Caller };
    const operation = locals.operationId;
    const status = res.statusCode;
    const label = operation ?? 'none';
    metrics.requests.inc({ operation: label, status });
    metrics.requestDuration.observe({ operation: label }, latencyMs / 1000);
    logger.request({
      requestId,
      method: req.method,
      ...(operation === undefined ? { path: unroutedPath(req.url) } : { operation }),
      status,
      latencyMs,
      ...(locals.caller ? { keyId: locals.caller.keyId } : {}),
      ...(res.writableFinished ? {} : { aborted: true }),
    });
  };
  return {
    middleware(req, res, next) {
      const start = performance.now();
      const requestId = acceptedRequestId(req.headers['x-request-id']) ?? randomUUID();
      res.setHeader('X-Request-Id', requestId);
      // 'close' comes once per response: after the last byte, or when the client went away first.
      res.once('close', () => done(req, res, requestId, start));
      next();
    },
    rateLimited(operationId) {
      metrics.rateLimitRefusals.inc({ operation: operationId });
    },
  };
}

/** The path of a request no operation matched, for the log: no query, nothing shaped like a key, bounded. */
function unroutedPath(url: string): string {
  const q = url.indexOf('?');
  const path = scrubKeys(q === -1 ? url : url.slice(0, q));
  return path.length <= PATH_LOG_MAX ? path : `${path.slice(0, PATH_LOG_MAX)}…`;
}

/** The stream's connection events (StreamDeps.events), to the logger and the metrics. */
export interface StreamObserver {
  opened(e: { connectionId: string; accountId: string; keyId: string }): void;
  closed(e: { connectionId: string; accountId: string; keyId: string; code: number; durationMs: number }): void;
  refused(e: { connectionId: string; code: number; reason: string }): void;
  delivered(batch: readonly FeedEntry[], now: number): void;
  takeover(e: { connectionId: string; accountId: string; previousConnectionId?: string }): void;
}

export function createStreamObserver(deps: { logger: OpsLogger; metrics: Metrics }): StreamObserver {
  const { logger, metrics } = deps;
  return {
    opened: (e) => logger.stream({ event: 'open', ...e }),
    closed: (e) => logger.stream({ event: 'close', ...e }),
    refused(e) {
      metrics.streamRefusals.inc({ code: e.code });
      logger.stream({ event: 'refused', ...e });
    },
    delivered(batch, now) {
      for (const { article } of batch) {
        const received = Date.parse(article.received_at);
        if (Number.isFinite(received)) metrics.deliveryLag.observe(Math.max(0, now - received) / 1000);
      }
    },
    takeover: (e) => logger.stream({ event: 'takeover', ...e }),
  };
}

/** The same embedder (and its `close`), with every failed call counted as an `embedder` dependency error. */
export function countEmbedderErrors(embedder: Embedder, metrics: Metrics): Embedder & { close?: () => Promise<void> } {
  const inner = embedder as Embedder & { close?: () => Promise<void> };
  return {
    modelId: inner.modelId,
    async embed(texts: string[]): Promise<Float32Array[]> {
      try {
        return await inner.embed(texts);
      } catch (e) {
        metrics.dependencyErrors.inc({ dependency: 'embedder' });
        throw e;
      }
    },
    ...(typeof inner.close === 'function' ? { close: () => inner.close!() } : {}),
  };
}
