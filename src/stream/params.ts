/** The `ws` binding's parameters beyond the key; patterns, bounds and close reasons from generated/stream.ts. Pure. */
import { streamQuery, streamRules } from '../../generated/stream.js';
import { articleRules } from '../contract/index.js';
import { tickerFilter, type TickerFilter } from '../delivery/index.js';
import type { CloseSpec } from './admission.js';

export interface StreamParams {
  /** Resume after this article id (exclusive); undefined: live only. */
  after?: string;
  tickers?: TickerFilter;
}

export type ParamsOutcome = { ok: true; params: StreamParams } | { ok: false; close: CloseSpec };

const afterPattern = new RegExp(streamQuery.after.pattern);
const tickersPattern = new RegExp(streamQuery.tickers.pattern);
const relevancePattern = new RegExp(streamQuery.min_relevance.pattern);

function fits(value: string, schema: { minLength: number; maxLength: number }, pattern: RegExp): boolean {
  return value.length >= schema.minLength && value.length <= schema.maxLength && pattern.test(value);
}

/**
 * `after` and `tickers` of an upgrade URL. Malformed, repeated or unlisted → `invalidParameter`; a valid
 * `tickers` on a plan without ticker data → `tickersRequireMax`: the form is judged before the plan.
 */
export function streamParams(url: string | undefined, planHasTickers: boolean): ParamsOutcome {
  const query = new URL(url ?? '/', 'http://stream.invalid').searchParams;
  const invalid: ParamsOutcome = { ok: false, close: streamRules.closeCodes.invalidParameter };
  const params: StreamParams = {};
  // The binding's query is closed: a misspelt `tikers=` must not quietly give an unfiltered stream.
  for (const name of query.keys()) if (!Object.hasOwn(streamQuery, name)) return invalid;

  const after = query.getAll('after');
  if (after.length > 1) return invalid;
  if (after.length === 1) {
    if (!fits(after[0]!, streamQuery.after, afterPattern)) return invalid;
    params.after = after[0]!;
  }

  const tickers = query.getAll('tickers');
  const min = query.getAll('min_relevance');
  if (tickers.length > 1 || min.length > 1) return invalid;
  // `min_relevance` belongs to the ticker filter: alone it would filter nothing.
  if (min.length === 1 && (tickers.length === 0 || !fits(min[0]!, streamQuery.min_relevance, relevancePattern)))
    return invalid;
  if (tickers.length === 1) {
    const raw = tickers[0]!;
    if (!fits(raw, streamQuery.tickers, tickersPattern)) return invalid;
    const symbols = raw.split(',');
    if (symbols.length > streamRules.tickersMaxItems || !symbols.every((s) => articleRules.tickerPattern.test(s)))
      return invalid;
    if (!planHasTickers) return { ok: false, close: streamRules.closeCodes.tickersRequireMax };
    params.tickers = tickerFilter(symbols, min.length === 1 ? Number(min[0]) : undefined)!;
  }
  return { ok: true, params };
}
