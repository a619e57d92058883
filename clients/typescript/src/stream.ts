import WebSocket from 'ws';
import { streamAddress, streamQuery, streamRules, type StreamMessage } from './generated/stream.js';
import { FnsStreamClosed } from './errors.js';

export type { StreamMessage };

export interface StreamOptions {
  baseUrl: string;
  apiKey: string;
  /**
   * The id of the last article your program has processed. When the service supports resuming (the
   * contract's `after` connection parameter), the stream starts with every later article; on each
   * reconnect the client resumes from the last id it delivered.
   */
  after?: string;
  /** Only articles about these tickers, when the contract has the `tickers` connection parameter. */
  tickers?: string[];
  /** With `tickers`: the least relevance (0 to 1) one of them must have; the service's default (0.5) when absent. */
  minRelevance?: number;
  /** Stops the iterator (it returns normally). */
  signal?: AbortSignal;
  /** Reconnect delays: exponential from `initialMs` (default 500) up to `maxMs` (default 30 s), with full jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  /**
   * No frame at all (article or ping) for this long means the connection is dead, not a quiet market:
   * the client drops it and reconnects. Default: 2.5 × the contract's ping interval (75 s).
   */
  deadAfterMs?: number;
  /** Articles queued but not yet consumed before the client stops reading the socket (default 1,000). */
  highWaterMark?: number;
  /** Observes the connection's life (logs, metrics). */
  onEvent?: (event: StreamEvent) => void;
  /**
   * `Only one stream connection per account` can be a slot the service has not freed yet rather than
   * another program of the account: this client's own connection that just ended (held until the
   * service notices it gone, at most two ping intervals), or a slot left by an attempt the service gave
   * up on (an older service could keep one after answering `1013` during a shared-state outage, until
   * its 20 s lease ran out). So that refusal is retried like "later", with the usual backoff, until the
   * refusals in a row have lasted this long; then it stops with `FnsStreamClosed`. A genuine second
   * connection is thus reported after this long instead of at once. Default: 2 ping intervals + 5 s
   * (65 s: past the slot of a connection that is gone, whichever way it went).
   */
  slotGraceMs?: number;
  /** Randomness for the jitter (tests). */
  random?: () => number;
  /**
   * Options passed to the `ws` connection (e.g. `agent`, `localAddress`, TLS settings such as `ca`):
   * see the `ws` package's ClientOptions. Kept untyped here so your program needs no `@types/ws`.
   */
  webSocket?: Record<string, unknown>;
}

export type StreamEvent =
  | { type: 'open'; attempt: number }
  | { type: 'close'; code: number; reason: string; willRetry: boolean }
  | { type: 'dead'; silentForMs: number }
  | { type: 'retry'; inMs: number; attempt: number };

/** Close codes that mean "stop": retrying cannot succeed (every 1008 of the contract). */
const STOP_CODES: ReadonlySet<number> = new Set(
  Object.values(streamRules.closeCodes)
    .map((c) => c.code)
    .filter((code) => code === 1008),
);

/** Whether the contract lets a connection ask for what it missed, and filter by tickers. */
const RESUMABLE = 'after' in streamQuery;
const FILTERABLE = 'tickers' in streamQuery;

/** The delay before reconnect attempt `attempt` (1-based): full jitter over an exponential bound. */
export function reconnectDelayMs(attempt: number, initialMs: number, maxMs: number, random: () => number): number {
  const bound = Math.min(maxMs, initialMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(bound * (0.5 + random() / 2));
}

function streamUrl(opts: StreamOptions, after: string | undefined): string {
  const url = new URL(streamAddress, opts.baseUrl.replace(/^http/, 'ws'));
  url.searchParams.set('api_key', opts.apiKey);
  if (RESUMABLE && after) url.searchParams.set('after', after);
  if (FILTERABLE && opts.tickers?.length) {
    url.searchParams.set('tickers', opts.tickers.join(','));
    if (opts.minRelevance !== undefined) url.searchParams.set('min_relevance', String(opts.minRelevance));
  }
  return url.toString();
}

/**
 * The firehose as an async iterable: `for await (const article of stream(opts))`. Reconnects with
 * exponential backoff and jitter on every close that means "later" (slow consumer, shutdown, an
 * unavailable service, a dropped or dead connection), resumes from the last id delivered, never delivers
 * an id twice or out of order, and ends with `FnsStreamClosed` on a close that means "stop".
 */
export async function* stream(opts: StreamOptions): AsyncGenerator<StreamMessage, void, undefined> {
  if (opts.tickers?.length && !FILTERABLE)
    throw new TypeError('this version of the contract has no ticker filter on the stream');
  if (opts.minRelevance !== undefined && (!opts.tickers?.length || !('min_relevance' in streamQuery))) {
    throw new TypeError('minRelevance applies to the tickers filter: give tickers too');
  }
  if (opts.minRelevance !== undefined && !(opts.minRelevance >= 0 && opts.minRelevance <= 1))
    throw new RangeError('minRelevance must be a number from 0 to 1');
  const initialMs = opts.backoff?.initialMs ?? 500;
  const maxMs = opts.backoff?.maxMs ?? 30_000;
  const deadAfterMs = opts.deadAfterMs ?? streamRules.pingIntervalSeconds * 2500;
  const highWater = opts.highWaterMark ?? 1000;
  const random = opts.random ?? Math.random;
  const slotGraceMs = opts.slotGraceMs ?? streamRules.pingIntervalSeconds * 2000 + 5000;
  const second = streamRules.closeCodes.secondConnection;
  let lastId = opts.after;
  let failures = 0;
  /** When the current run of `Only one stream connection per account` refusals began. */
  let refusedSince: number | undefined;

  while (!opts.signal?.aborted) {
    const queue: StreamMessage[] = [];
    let ended: { code: number; reason: string } | undefined;
    let wake: (() => void) | undefined;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const extraHeaders = (opts.webSocket?.headers ?? {}) as Record<string, string>;
    const ws = new WebSocket(streamUrl(opts, lastId), {
      ...(opts.webSocket as WebSocket.ClientOptions | undefined),
      headers: { ...extraHeaders, 'X-API-Key': opts.apiKey },
    });
    let lastFrame = Date.now();
    let paused = false;
    // Established: the server sent something (an article or a ping), so it had admitted us; a refused
    // connection is closed right after the handshake with nothing before the close.
    let established = false;
    const watchdog = setInterval(
      () => {
        const silent = Date.now() - lastFrame;
        if (silent > deadAfterMs) {
          opts.onEvent?.({ type: 'dead', silentForMs: silent });
          ws.terminate();
        }
      },
      Math.max(50, Math.min(5000, deadAfterMs / 5)),
    );
    const onAbort = () => ws.close(1000, 'client done');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    ws.on('open', () => {
      lastFrame = Date.now();
      opts.onEvent?.({ type: 'open', attempt: failures + 1 });
    });
    ws.on('ping', () => {
      lastFrame = Date.now();
      established = true;
    });
    ws.on('message', (data) => {
      lastFrame = Date.now();
      established = true;
      let article: StreamMessage;
      try {
        article = JSON.parse(data.toString()) as StreamMessage;
      } catch {
        return; // the contract sends only Article JSON; anything else is not an article
      }
      if (typeof article?.id !== 'string') return;
      queue.push(article);
      // Backpressure: stop reading the socket while the program is behind; the server's own bound
      // then decides (it closes a slow consumer with 1013, and the client resumes from its last id).
      if (queue.length >= highWater && !paused) {
        paused = true;
        ws.pause();
      }
      notify();
    });
    // An upgrade answered with HTTP: 4xx but 408/429 cannot succeed by retrying; anything else may.
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      ended = { code: status, reason: `HTTP ${status} ${res.statusMessage ?? ''}`.trim() };
      res.resume();
      ws.terminate();
    });
    ws.on('error', () => undefined); // followed by 'close'
    ws.on('close', (code, reason) => {
      ended ??= { code, reason: reason.toString() };
      notify();
    });

    try {
      for (;;) {
        while (queue.length > 0) {
          const article = queue.shift()!;
          if (paused && queue.length < highWater / 2) {
            paused = false;
            ws.resume();
          }
          // Never twice, never backwards: ids sort by the time the service received the article.
          if (lastId !== undefined && article.id <= lastId) continue;
          lastId = article.id;
          failures = 0;
          yield article;
        }
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      clearInterval(watchdog);
      opts.signal?.removeEventListener('abort', onAbort);
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.terminate();
    }
    if (opts.signal?.aborted) return;
    const { code, reason } = ended!;
    const now = Date.now();
    // A slot not freed yet (our own previous connection not yet noticed gone, or one the service kept
    // for an attempt it gave up on): "later", until such refusals have lasted `slotGraceMs`.
    const slotRefusal = code === second.code && reason === second.reason && !established;
    refusedSince = slotRefusal ? (refusedSince ?? now) : undefined;
    const slotNotFreedYet = slotRefusal && now - refusedSince! < slotGraceMs;
    const stop =
      (STOP_CODES.has(code) && !slotNotFreedYet) || (code >= 400 && code < 500 && code !== 408 && code !== 429);
    opts.onEvent?.({ type: 'close', code, reason, willRetry: !stop });
    if (stop) throw new FnsStreamClosed(code, reason);
    failures++;
    const inMs = reconnectDelayMs(failures, initialMs, maxMs, random);
    opts.onEvent?.({ type: 'retry', inMs, attempt: failures });
    await new Promise<void>((resolve) => {
      const onAbortWait = () => (clearTimeout(t), resolve());
      const t = setTimeout(() => (opts.signal?.removeEventListener('abort', onAbortWait), resolve()), inMs);
      opts.signal?.addEventListener('abort', onAbortWait, { once: true });
    });
  }
}
