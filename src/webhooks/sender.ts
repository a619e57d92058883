/**
 * One webhook request: POST to the checked address (the host name kept for TLS and Host, never resolved
 * again), no redirects. The status line is the outcome and ends the timeout (a 2xx succeeds whatever the body
 * does); the body is then read for at most ANSWER_READ_MS and ANSWER_READ_BYTES, so a trickler never costs a retry.
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

/** Bytes of a failed answer kept for `webhooks list`. */
const ANSWER_EXCERPT_BYTES = 512;
/** The most of an answer's body read (a complete short body keeps the connection for reuse). */
const ANSWER_READ_BYTES = 4096;
/** How long an answer's body is read after its status line before the connection is cut. */
const ANSWER_READ_MS = 1000;

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 4 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 4 }),
};

export const httpSender: Sender = (r) =>
  new Promise<SendResult>((resolve) => {
    const started = performance.now();
    const lib = r.url.protocol === 'https:' ? https : http;
    const pinned: LookupFunction = (_host, options, cb) => {
      if ((options as { all?: boolean }).all)
        (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [r.address]);
      else cb(null, r.address.address, r.address.family);
    };
    let settled = false;
    const onAbort = () => {
      done(null, 'aborted: the dispatcher is stopping');
      req.destroy();
    };
    /** `answeredAt`: when the status line arrived; the latency excludes reading the body. */
    const done = (status: number | null, error: string | null, answeredAt = performance.now()) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // One signal serves every request of a dispatcher: its listener goes with the request.
      r.signal?.removeEventListener('abort', onAbort);
      resolve({ status, error, latencyMs: answeredAt - started });
    };
    const req = lib.request(
      r.url,
      {
        method: 'POST',
        agent: r.url.protocol === 'https:' ? agents.https : agents.http,
        lookup: pinned,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(r.body)),
          'user-agent': 'fns-webhooks/1',
          ...r.headers,
        },
      },
      (res) => {
        // The status line decides: the answer came in time, whatever its body does next.
        clearTimeout(timer);
        const answeredAt = performance.now();
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const chunks: Buffer[] = [];
        let read = 0;
        let finished = false;
        const finish = (complete: boolean) => {
          if (finished) return;
          finished = true;
          clearTimeout(bodyTimer);
          // Without NUL: PostgreSQL cannot store it as text, and the failure could not be recorded (retried every 2 s).
          const excerpt = Buffer.concat(chunks)
            .toString('utf8')
            .replace(/\u0000/g, '')
            .trim()
            .replace(/\s+/g, ' ')
            .slice(0, 200);
          done(
            status,
            ok
              ? null
              : `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}${excerpt ? `: ${excerpt}` : ''}`,
            answeredAt,
          );
          // A body not read to its end leaves the connection unusable: it is destroyed, not pooled.
          if (!complete) res.destroy();
        };
        const bodyTimer = setTimeout(() => finish(false), ANSWER_READ_MS);
        res.on('data', (chunk: Buffer) => {
          if (read < ANSWER_EXCERPT_BYTES) chunks.push(chunk.subarray(0, ANSWER_EXCERPT_BYTES - read));
          read += chunk.length;
          if (read > ANSWER_READ_BYTES) finish(false);
        });
        res.on('end', () => finish(true));
        res.on('error', () => finish(false));
        res.on('close', () => finish(false));
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
