/** Paging rules of list and search (openapi.yaml "Following the archive without gaps"), shared by service and mock. */
import { searchRankingMax } from '../contract/index.js';

/** The list parameters that shape `next`, as the client wrote them (`limit` always: its default is filled in). */
export interface ListParams {
  limit?: string;
  since?: string;
  urgency?: string;
  tickers?: string[];
  /** With `tickers` only (its default filled in when the request gave none). */
  min_relevance?: string;
  after?: string;
  before?: string;
}

export interface SearchParams {
  q: string;
  offset: number;
  tickers?: string[];
  min_relevance?: string;
}

/** A query value as written in `next`: reserved characters escaped except those a symbol or a time uses. */
function enc(value: string): string {
  return encodeURIComponent(value).replace(/%2C/g, ',').replace(/%3A/g, ':').replace(/%2F/g, '/');
}

function queryString(pairs: [string, string | undefined][]): string {
  return pairs
    .filter((p): p is [string, string] => p[1] !== undefined)
    .map(([k, v]) => `${k}=${enc(v)}`)
    .join('&');
}

/** A query value that is one string (validation has refused repeats); undefined when absent. */
function single(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The `tickers` parameter as symbols: the validator may have split it already (form style, explode false). */
export function tickerList(v: unknown): string[] | undefined {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === 'string') return v.split(',');
  return undefined;
}

/** What a list request's query says about paging and filters (values validated already). */
export function listParams(query: Record<string, unknown>): ListParams {
  const out: ListParams = {};
  const set = (k: 'limit' | 'since' | 'urgency' | 'after' | 'before') => {
    const v = query[k];
    // `limit` may have been coerced to a number by the validator.
    const s = typeof v === 'number' ? String(v) : single(v);
    if (s !== undefined) out[k] = s;
  };
  set('limit');
  set('since');
  set('urgency');
  set('after');
  set('before');
  const tickers = tickerList(query.tickers);
  if (tickers) {
    out.tickers = tickers;
    const min = relevanceOf(query);
    if (min !== undefined) out.min_relevance = String(min);
  }
  return out;
}

/** The `min_relevance` of a request's parameters as a number (validated already; undefined when absent). */
export function relevanceOf(query: Record<string, unknown>): number | undefined {
  const v = query.min_relevance;
  return typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : undefined;
}

/**
 * The `next` of a list page. With `after`: always, after the page's newest (or the same `after` when empty:
 * the page to poll); else `before` the page's oldest when full, null at the end of the window.
 */
export function listNext(
  params: ListParams,
  limit: number,
  page: { count: number; lastId: string | undefined },
): string | null {
  const last = page.lastId;
  const base: [string, string | undefined][] = [
    ['limit', params.limit],
    ['since', params.since],
    ['urgency', params.urgency],
    ['tickers', params.tickers?.join(',')],
    ['min_relevance', params.min_relevance],
  ];
  if (params.after !== undefined) return `/v1/news?${queryString([...base, ['after', last ?? params.after]])}`;
  if (last === undefined || page.count < limit) return null;
  return `/v1/news?${queryString([...base, ['before', last]])}`;
}

/** The `next` of a search page: `offset` moved by `limit`, cut at searchRankingMax; null if not full or at the end. */
export function searchNext(params: SearchParams, limit: number, count: number): string | null {
  const offset = params.offset + limit;
  if (count < limit || offset >= searchRankingMax) return null;
  return `/v1/news/search?${queryString([
    ['q', params.q],
    ['limit', String(Math.min(limit, searchRankingMax - offset))],
    ['offset', String(offset)],
    ['tickers', params.tickers?.join(',')],
    ['min_relevance', params.tickers ? params.min_relevance : undefined],
  ])}`;
}

export function linkHeader(next: string): string {
  return `<${next}>; rel="next"`;
}
