/**
 * The SQL of one list page (GET /v1/news) for both engines: one statement per shape, prepared once, values bound.
 * - Bounds: `id > lower AND id < upper`; `lower` is the larger of the `afterId` cursor and the time bound
 *   (every id of a later millisecond sorts above `<time prefix>ZZZ…`); `upper` is `beforeId`, or above every ULID.
 * - Tickers: one range scan of article_tickers per symbol (urgency denormalised), each at most `limit` rows, then
 *   their union: O(k·(log n + limit)) for k symbols, whatever the archive size. Rows below the query's
 *   `minRelevance` (the contract's default when it gives none) are skipped in the scan.
 */
import { clampLimit } from '../../domain/articles.js';
import { limitBounds, minRelevanceDefault as MIN_RELEVANCE_DEFAULT } from '../../contract/index.js';
import type { ListQuery } from './index.js';
import { ulidTimePrefix } from './ids.js';

/** Above every ULID (their first character is 0-7). */
const TOP = '8';

export interface ListShape {
  urgency: boolean;
  /** Number of ticker symbols (0: no ticker filter). */
  tickers: number;
  ascending: boolean;
}

/** A query's statement shape and bound values; a symbol listed twice is one range scan. */
export function listPlan(q: ListQuery): { shape: ListShape; values: Record<string, string | number> } {
  const query = distinctTickers(q);
  const shape = {
    urgency: query.urgency !== undefined,
    tickers: query.tickers?.length ?? 0,
    ascending: query.ascending === true,
  };
  return { shape, values: listValues(query) };
}

export function shapeKey(s: ListShape): string {
  return `${s.ascending ? 'a' : 'd'}${s.urgency ? 'u' : ''}${s.tickers}`;
}

/** The bound values of a query, by parameter name (`lo`, `hi`, `n`, `u`, `t0`…). */
function listValues(q: ListQuery): Record<string, string | number> {
  const timeBound = ulidTimePrefix(Math.max(0, Math.trunc(q.afterMs))) + 'ZZZZZZZZZZZZZZZZ';
  const lower = q.afterId !== undefined && q.afterId > timeBound ? q.afterId : timeBound;
  const values: Record<string, string | number> = {
    lo: lower,
    hi: q.beforeId ?? TOP,
    // A second line of defence behind request validation: a page is never larger than the contract allows.
    n: clampLimit(q.limit, limitBounds),
  };
  if (q.urgency !== undefined) values.u = q.urgency;
  (q.tickers ?? []).forEach((t, i) => (values[`t${i}`] = t));
  if (q.tickers?.length) values.r = q.minRelevance ?? MIN_RELEVANCE_DEFAULT;
  return values;
}

/** Distinct ticker symbols, in the order given. */
function distinctTickers(q: ListQuery): ListQuery {
  if (!q.tickers) return q;
  const tickers = [...new Set(q.tickers)];
  return tickers.length === q.tickers.length ? q : { ...q, tickers };
}

/** The statement of a shape: `select` over `articles`; `p(name)` writes the engine's placeholder for a named value. */
export function listSql(select: string, shape: ListShape, p: (name: string) => string): string {
  const dir = shape.ascending ? 'ASC' : 'DESC';
  const urgency = shape.urgency ? `urgency = ${p('u')} AND ` : '';
  if (shape.tickers === 0) {
    return `SELECT ${select} FROM articles WHERE ${urgency}id > ${p('lo')} AND id < ${p('hi')} ORDER BY id ${dir} LIMIT ${p('n')}`;
  }
  const scans = Array.from(
    { length: shape.tickers },
    (_, i) =>
      `SELECT article_id FROM (SELECT article_id FROM article_tickers WHERE ticker = ${p(`t${i}`)} AND relevance >= ${p('r')} AND ${urgency}article_id > ${p('lo')} AND article_id < ${p('hi')} ORDER BY article_id ${dir} LIMIT ${p('n')}) AS s${i}`,
  );
  return `SELECT ${select} FROM articles WHERE id IN (${scans.join(' UNION ALL ')}) ORDER BY id ${dir} LIMIT ${p('n')}`;
}

/** PostgreSQL placeholders: `$1`… numbered in order of first use; `names` gives the binding order. */
export function numberedPlaceholders(): { p: (name: string) => string; names: string[] } {
  const names: string[] = [];
  return {
    names,
    p: (name) => {
      let i = names.indexOf(name);
      if (i === -1) i = names.push(name) - 1;
      return `$${i + 1}`;
    },
  };
}

export interface TickerRow {
  ticker: string;
  article_id: string;
  urgency: string;
  relevance: number;
}

/** The ticker index rows of stored articles: one per distinct symbol (its first entry's relevance). */
export function tickerRows(
  articles: { id: string; urgency: string; tickers: { ticker: string; relevance: number }[] }[],
): TickerRow[] {
  const rows: TickerRow[] = [];
  for (const a of articles) {
    const seen = new Set<string>();
    for (const t of a.tickers) {
      if (seen.has(t.ticker)) continue;
      seen.add(t.ticker);
      rows.push({ ticker: t.ticker, article_id: a.id, urgency: a.urgency, relevance: t.relevance });
    }
  }
  return rows;
}
