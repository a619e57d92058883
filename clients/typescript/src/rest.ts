import type { components, operations } from './generated/openapi.js';
import { FnsProblem, retryAfterSeconds, type ProblemBody } from './errors.js';

export type Article = components['schemas']['Article'];
export type NewsList = components['schemas']['NewsList'];
export type SearchResults = components['schemas']['SearchResults'];
export type Usage = components['schemas']['Usage'];
export type ListNewsParams = NonNullable<operations['listNews']['parameters']['query']>;
export type SearchNewsParams = operations['searchNews']['parameters']['query'];

/** The rate-limit state the service reported with an answer (every counted response carries it). */
export interface RateLimit {
  limit: number;
  remaining: number;
  /** Epoch seconds when the oldest request of the window leaves it. */
  reset: number;
}

export interface RestOptions {
  /** The service's base URL, e.g. `https://api.fns.example` or the mock's `http://127.0.0.1:4010`. */
  baseUrl: string;
  apiKey: string;
  /**
   * Wait and retry when the API answers `429` with `Retry-After`, as long as the wait is at most
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

function rateLimitOf(headers: Headers): RateLimit | undefined {
  const limit = headers.get('x-ratelimit-limit');
  const remaining = headers.get('x-ratelimit-remaining');
  const reset = headers.get('x-ratelimit-reset');
  if (limit === null || remaining === null || reset === null) return undefined;
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) };
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
      body = { type: 'about:blank', title: res.statusText || 'Error', status: res.status, detail: text.slice(0, 200) || `HTTP ${res.status}` };
    }
    const problem = new FnsProblem(body, retryAfter);
    if (res.status === 429 && wait && retryAfter !== undefined && retryAfter * 1000 <= maxWaitMs && attempt < maxRetries) {
      await sleep(retryAfter * 1000);
      continue;
    }
    throw problem;
  }
}
