/**
 * One webhook request: POST to the address that was checked (the host name is kept for TLS and the
 * Host header, but never resolved again), a timeout on the whole exchange, redirects not followed, and
 * at most a few KiB of the answer read (for the error text), the rest discarded.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

export interface SendRequest {
  url: URL;
  /** The checked address to connect to. */
  address: { address: string; family: number };
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborts the request (a stopping dispatcher); the result is then a failure with no status. */
  signal?: AbortSignal;
}

export interface SendResult {
  /** The answer's status, or null when there was none (refused, reset, timeout). */
  status: number | null;
  /** Why it failed (null on a 2xx). Never contains a secret. */
  error: string | null;
  latencyMs: number;
}

export type Sender = (r: SendRequest) => Promise<SendResult>;

/** Bytes of a failed answer kept for `webhooks list` (the rest is discarded unread). */
export const ANSWER_EXCERPT_BYTES = 512;

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 4 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 4 }),
};

export const httpSender: Sender = (r) =>
  new Promise<SendResult>((resolve) => {
    const started = performance.now();
    const lib = r.url.protocol === 'https:' ? https : http;
    const pinned: LookupFunction = (_host, options, cb) => {
      if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [r.address]);
      else cb(null, r.address.address, r.address.family);
    };
    let settled = false;
    const onAbort = () => {
      done(null, 'aborted: the dispatcher is stopping');
      req.destroy();
    };
    const done = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // One signal serves every request of a dispatcher: its listener goes with the request.
      r.signal?.removeEventListener('abort', onAbort);
      resolve({ status, error, latencyMs: performance.now() - started });
    };
    const req = lib.request(
      r.url,
      {
        method: 'POST',
        agent: r.url.protocol === 'https:' ? agents.https : agents.http,
        lookup: pinned,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(r.body)), 'user-agent': 'fns-webhooks/1', ...r.headers },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        let excerpt = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!ok && excerpt.length < ANSWER_EXCERPT_BYTES) excerpt += chunk.slice(0, ANSWER_EXCERPT_BYTES - excerpt.length);
        });
        res.on('end', () => done(status, ok ? null : `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}${excerpt.trim() ? `: ${excerpt.trim().replace(/\s+/g, ' ').slice(0, 200)}` : ''}`));
        res.on('error', (e) => done(ok ? status : status, ok ? null : `HTTP ${status}: ${e.message}`));
      },
    );
    const timer = setTimeout(() => {
      done(null, `no answer within ${r.timeoutMs / 1000} s`);
      req.destroy();
    }, r.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => done(null, e.code ? `${e.code}: ${e.message}` : e.message));
    if (r.signal?.aborted) onAbort();
    else r.signal?.addEventListener('abort', onAbort, { once: true });
    req.end(r.body);
  });
