import type { components, operations } from './generated/openapi.js';
import { FnsProblem, retryAfterSeconds, type ProblemBody } from './errors.js';
import { parseRateLimit, parseRateLimitPolicy, rateLimitWaitSeconds } from './ratelimit.js';

export type Article = components['schemas']['Article'];
export type NewsList = components['schemas']['NewsList'];
export type SearchResults = components['schemas']['SearchResults'];
export type Usage = components['schemas']['Usage'];
export type StatusReport = components['schemas']['StatusReport'];
export type ListNewsParams = NonNullable<operations['listNews']['parameters']['query']>;
export type SearchNewsParams = operations['searchNews']['parameters']['query'];

/**
 * The rate-limit state the service reported with an answer (every counted response carries it), read
 * from the standard `RateLimit-Policy` / `RateLimit` fields when present, else from `X-RateLimit-*`.
 */
export interface RateLimit {
  limit: number;
  remaining: number;
  /**
   * Epoch seconds when the oldest request of the window leaves it: now (this machine's clock) plus the
   * `t` of `RateLimit`, or `X-RateLimit-Reset` (the service's clock) without the standard fields.
   */
  reset: number;
  /** The policy named in `RateLimit` (the key's tier), when the answer had the standard fields. */
  policy?: string;
}

export interface RestOptions {
  /** The service's base URL, e.g. `https://api.fns.example` or the mock's `http://127.0.0.1:4010`. */
  baseUrl: string;
  apiKey: string;
  /**
   * Wait and retry when the API answers `429` with `Retry-After` (or, without it, the `t` of the
   * standard `RateLimit` field, then `X-RateLimit-Reset`), as long as the wait is at most
   * `maxWaitMs` (default 60 s) and at most `maxRetries` times (default 3). Off by default: a `429`
   * throws `FnsProblem`.
   */
  waitOnRateLimit?: boolean | { maxWaitMs?: number; maxRetries?: number };
  /** A `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Called with the rate-limit headers of every counted answer. */
  onRateLimit?: (rateLimit: RateLimit) => void;
  /** Timer used for the waits (tests). */
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function query(params: Record<string, unknown> | undefined): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) {
    if (v === undefined || v === null) continue;
    // Arrays (tickers) travel as the contract's comma-separated form.
    q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

const integerHeader = (headers: Headers, name: string): number | undefined => {
  const v = headers.get(name)?.trim();
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
};

function rateLimitOf(headers: Headers, now: number = Date.now()): RateLimit | undefined {
  // The standard fields first (the most constraining service limit and its policy), then X-RateLimit-*.
  const current = parseRateLimit(headers.get('ratelimit'))?.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  const policy =
    current && parseRateLimitPolicy(headers.get('ratelimit-policy'))?.find((p) => p.policy === current.policy);
  const limit = policy?.quota ?? integerHeader(headers, 'x-ratelimit-limit');
  const remaining = current?.remaining ?? integerHeader(headers, 'x-ratelimit-remaining');
  const t = current?.resetSeconds;
  const reset = t !== undefined ? Math.ceil(now / 1000) + t : integerHeader(headers, 'x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return { limit, remaining, reset, ...(current ? { policy: current.policy } : {}) };
}

/**
 * Seconds to wait after a `429`: `Retry-After` (the draft gives it precedence over `RateLimit`), else
 * the `t` of an exhausted policy in `RateLimit`, else `X-RateLimit-Reset` when nothing remains.
 */
function waitSecondsOf(headers: Headers, limits: RateLimit | undefined, now: number = Date.now()): number | undefined {
  const retryAfter = retryAfterSeconds(headers.get('retry-after'), now);
  if (retryAfter !== undefined) return retryAfter;
  const t = rateLimitWaitSeconds(parseRateLimit(headers.get('ratelimit')));
  if (t !== undefined) return t;
  return limits && limits.remaining === 0 ? Math.max(0, limits.reset - Math.floor(now / 1000)) : undefined;
}

/** GET a JSON resource of the API, turning problems into `FnsProblem` and waiting on 429 when asked. */
export async function getJson<T>(opts: RestOptions, path: string, params?: Record<string, unknown>): Promise<T> {
  return getUrl<T>(opts, `${path}${query(params)}`);
}

/** GET a path and query as the API gave it (a `next` link). */
export async function getUrl<T>(opts: RestOptions, pathAndQuery: string): Promise<T> {
  const doFetch = opts.fetch ?? fetch;
  const sleep = opts.sleep ?? defaultSleep;
  const wait = opts.waitOnRateLimit === true ? {} : opts.waitOnRateLimit || undefined;
  const maxWaitMs = wait?.maxWaitMs ?? 60_000;
  const maxRetries = wait?.maxRetries ?? 3;
  const url = `${opts.baseUrl.replace(/\/+$/, '')}${pathAndQuery}`;
  for (let attempt = 0; ; attempt++) {
    const res = await doFetch(url, { headers: { 'X-API-Key': opts.apiKey, Accept: 'application/json' } });
    const limits = rateLimitOf(res.headers);
    if (limits) opts.onRateLimit?.(limits);
    if (res.ok) return (await res.json()) as T;
    const retryAfter = retryAfterSeconds(res.headers.get('retry-after'));
    const text = await res.text();
    let body: ProblemBody;
    try {
      body = JSON.parse(text) as ProblemBody;
      if (typeof body.detail !== 'string') throw new Error('not a problem');
    } catch {
      body = {
        type: 'about:blank',
        title: res.statusText || 'Error',
        status: res.status,
        detail: text.slice(0, 200) || `HTTP ${res.status}`,
      };
    }
    const problem = new FnsProblem(body, retryAfter);
    const waitSeconds = res.status === 429 ? waitSecondsOf(res.headers, limits) : undefined;
    if (wait && waitSeconds !== undefined && waitSeconds * 1000 <= maxWaitMs && attempt < maxRetries) {
      await sleep(waitSeconds * 1000);
      continue;
    }
    throw problem;
  }
}
