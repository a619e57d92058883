/**
 * Article lines (NDJSON, docs/operations.md "Ingesting articles"; the admin push's too): checked against the
 * contract and completed with derived fields; a bad line is reported by number and skipped. Stored as a feed
 * item is: `content` one line of plain text, `published_at` UTC with milliseconds. Unknown fields are refused.
 */
import { articleRules, articleSentiments, tickerSentiments, urgencies } from '../contract/index.js';
import type { NewArticle } from '../store/ports/index.js';
import { conformArticle, type TickerInput } from '../domain/articles.js';
import { parseRfc3339, utcDateTime } from '../domain/time.js';
import { longerThan, plainLine } from '../domain/text.js';
import { enrich } from '../enrich/index.js';
import { SOURCE_NAME } from '../domain/source-name.js';
import { loneSurrogateError } from './utf8.js';
import { URL_MAX_LENGTH } from './identity.js';

type LineResult = { ok: true; article: NewArticle } | { ok: false; error: string };

export const ARTICLE_FIELDS: ReadonlySet<string> = new Set([
  'content',
  'urgency',
  'published_at',
  'sentiment',
  'tickers',
  'source',
  'url',
]);

const TICKER_FIELDS: ReadonlySet<string> = new Set(['ticker', 'sentiment', 'relevance']);

/** The refusal of own fields not in `known` (`__proto__` too: JSON.parse makes it an own field), or null. */
export function unknownFieldsError(line: object, ...known: ReadonlySet<string>[]): string | null {
  const unknown = Object.keys(line).filter((k) => !known.some((set) => set.has(k)));
  return unknown.length ? `unknown field(s): ${unknown.join(', ')}` : null;
}

export function parseArticle(input: unknown): LineResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, error: 'must be a JSON object' };
  const o = input as Record<string, unknown>;
  const lone = loneSurrogateError(o);
  if (lone !== null) return { ok: false, error: lone };
  const unknown = unknownFieldsError(o, ARTICLE_FIELDS);
  if (unknown !== null) return { ok: false, error: unknown };
  // A NUL character is not text (and PostgreSQL cannot store it): the line is refused, on every store.
  for (const f of ['content', 'source', 'url'] as const) {
    if (typeof o[f] === 'string' && (o[f] as string).includes('\u0000'))
      return { ok: false, error: `${f} must not contain a NUL character` };
  }
  const content = typeof o.content === 'string' ? plainLine(o.content) : '';
  if (content === '') return { ok: false, error: 'content is required and must be a non-empty string' };
  if (longerThan(content, articleRules.contentMaxLength))
    return { ok: false, error: `content is longer than ${articleRules.contentMaxLength} characters` };

  const derived = enrich(content);
  let urgency = derived.urgency;
  if (o.urgency !== undefined && o.urgency !== null) {
    if (!urgencies.includes(o.urgency as never))
      return { ok: false, error: `urgency must be one of ${urgencies.join(', ')}` };
    urgency = o.urgency as typeof urgency;
  }
  let sentiment = derived.sentiment;
  if (o.sentiment !== undefined) {
    if (!articleSentiments.includes(o.sentiment as never))
      return { ok: false, error: `sentiment must be one of ${articleSentiments.map(String).join(', ')}` };
    sentiment = o.sentiment as typeof sentiment;
  }
  let published_at: string | null = null;
  if (o.published_at !== undefined && o.published_at !== null) {
    const ms = typeof o.published_at === 'string' ? parseRfc3339(o.published_at) : undefined;
    if (ms === undefined)
      return {
        ok: false,
        error: 'published_at must be a real RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
      };
    const utc = utcDateTime(ms);
    if (utc === undefined) return { ok: false, error: 'published_at must fall within the years 0001-9999 in UTC' };
    published_at = utc;
  }
  let tickers: TickerInput[] = derived.tickers;
  if (o.tickers !== undefined) {
    const parsed = parseTickers(o.tickers);
    if (typeof parsed === 'string') return { ok: false, error: parsed };
    // A given ticker without relevance takes its mentions' relevance, else 1 (the publisher tagged it).
    const read = new Map(derived.tickers.map((t) => [t.ticker, t.relevance]));
    tickers = parsed.map((t) => (t.relevance !== undefined ? t : { ...t, relevance: read.get(t.ticker) ?? 1 }));
  }
  if (o.source !== undefined && o.source !== null && (typeof o.source !== 'string' || !SOURCE_NAME.test(o.source))) {
    return {
      ok: false,
      error: 'source must be a source name: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    };
  }
  if (o.url !== undefined && o.url !== null && (typeof o.url !== 'string' || o.url.length > URL_MAX_LENGTH)) {
    return { ok: false, error: `url must be a string of at most ${URL_MAX_LENGTH} characters` };
  }
  return {
    ok: true,
    // Derived tickers obey the contract too (valid, unique, at most tickersMaxItems).
    article: conformArticle({
      content,
      urgency,
      sentiment,
      published_at,
      tickers,
      source: (o.source as string) ?? null,
      url: (o.url as string) ?? null,
    }),
  };
}

function parseTickers(value: unknown): TickerInput[] | string {
  if (!Array.isArray(value)) return 'tickers must be an array of symbols or of {ticker, sentiment, relevance}';
  if (value.length > articleRules.tickersMaxItems)
    return `tickers may hold at most ${articleRules.tickersMaxItems} entries`;
  const out = new Map<string, TickerInput>();
  for (const t of value) {
    const entry = typeof t === 'string' ? { ticker: t, sentiment: 'neutral' } : t;
    if (typeof entry !== 'object' || entry === null || typeof entry.ticker !== 'string') {
      return 'tickers must be an array of symbols or of {ticker, sentiment, relevance}';
    }
    // As at the top level: a typo (`relevanse`) is refused by name, not read as a ticker without relevance.
    const unknown = unknownFieldsError(entry, TICKER_FIELDS);
    if (unknown !== null) return `ticker "${entry.ticker}": ${unknown}`;
    const ticker = entry.ticker.trim().toUpperCase();
    if (!articleRules.tickerPattern.test(ticker)) return `ticker "${entry.ticker}" is not a valid symbol`;
    if (!tickerSentiments.includes(entry.sentiment))
      return `ticker sentiment must be one of ${tickerSentiments.join(', ')}`;
    const r = entry.relevance;
    if (r !== undefined && (typeof r !== 'number' || !(r >= 0 && r <= 1)))
      return 'ticker relevance must be a number from 0 to 1';
    out.set(
      ticker,
      r === undefined ? { ticker, sentiment: entry.sentiment } : { ticker, sentiment: entry.sentiment, relevance: r },
    );
  }
  return [...out.values()];
}

/** One NDJSON line, parsed and checked. */
export function parseLine(raw: string): LineResult {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { ok: false, error: `not valid JSON (${(err as Error).message})` };
  }
  return parseArticle(value);
}

export interface NdjsonReport {
  articles: NewArticle[];
  errors: { line: number; error: string }[];
  lines: number;
}

/** Parses NDJSON text; blank lines are ignored, line numbers are 1-based. */
export function parseNdjson(text: string): NdjsonReport {
  const report: NdjsonReport = { articles: [], errors: [], lines: 0 };
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    report.lines++;
    const r = parseLine(raw);
    if (r.ok) report.articles.push(r.article);
    else report.errors.push({ line: i + 1, error: r.error });
  });
  return report;
}
