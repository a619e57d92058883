/** A plain `ws` client of `/v1/stream`, recording what a partner's client would see. */
import { afterEach } from 'vitest';
import { WebSocket } from 'ws';
import { streamAddress } from '../../src/contract/index.js';
import { nextLoopbackAddress } from './loopback-fetch.js';

export interface StreamClient {
  ws: WebSocket;
  /** Parsed JSON text messages, in order. */
  messages: unknown[];
  /** Resolves when the connection closes: the close code and reason the server sent. */
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves with the first `n` messages; rejects if the connection closes or `timeoutMs` passes first. */
  take(n: number, timeoutMs?: number): Promise<unknown[]>;
  close(): Promise<void>;
}

export function openStream(
  baseUrl: string,
  opts: { key?: string; header?: boolean; after?: string } = {},
): StreamClient {
  const url = new URL(`${baseUrl.replace(/^http/, 'ws')}${streamAddress}`);
  if (opts.key !== undefined && !opts.header) url.searchParams.set('api_key', opts.key);
  if (opts.after !== undefined) url.searchParams.set('after', opts.after);
  const ws = new WebSocket(url, {
    localAddress: nextLoopbackAddress(),
    ...(opts.key !== undefined && opts.header ? { headers: { 'X-API-Key': opts.key } } : {}),
  });
  const messages: unknown[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data, isBinary) => {
    messages.push(isBinary ? { binary: true } : JSON.parse(String(data)));
    for (const w of waiters) w();
  });
  ws.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const w of waiters) w();
    });
    ws.on('unexpected-response', (_req, res) => resolve({ code: -res.statusCode!, reason: `HTTP ${res.statusCode}` }));
  });
  return {
    ws,
    messages,
    closed,
    take(n, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length >= n) {
            finish();
            resolve(messages.slice(0, n));
          } else if (ws.readyState === ws.CLOSED) {
            finish();
            reject(new Error(`the stream closed after ${messages.length} of ${n} messages`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`only ${messages.length} of ${n} messages within ${timeoutMs} ms`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      if (ws.readyState === ws.CLOSED) return;
      ws.close();
      await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
      ws.terminate();
    },
  };
}

/** Resolves once the WebSocket is open (rejects when it closes first). */
export function opened(c: StreamClient, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (c.ws.readyState === c.ws.OPEN) return resolve();
    const timer = setTimeout(() => reject(new Error('not open in time')), timeoutMs);
    c.ws.once('open', () => {
      clearTimeout(timer);
      resolve();
    });
    c.closed.then(({ code, reason }) => {
      clearTimeout(timer);
      reject(new Error(`closed before open: ${code} ${reason}`));
    });
  });
}

/**
 * `connect(opts, url?)` for a suite: opens a stream client on the target (or `url`) and closes every client it opened
 * after each test (a sandbox key's stream slot is shared between tests).
 */
export function useStreamClients(
  baseUrl: () => string,
): (opts?: Parameters<typeof openStream>[1], url?: string) => StreamClient {
  const clients: StreamClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  return (opts, url = baseUrl()) => {
    const c = openStream(url, opts);
    clients.push(c);
    return c;
  };
}
