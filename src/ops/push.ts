/**
 * Push (POST /admin/v1/articles on the admin listener): the body's lines read and checked, then stored
 * through the sources' ingest (exact and near dedup, enrichment, one transaction), answering per line.
 * The HTTP side (token, type, size) is in admin.ts; this module is the part without sockets.
 *
 * A line: `source` (required, a source name), `id` (required, the source's own id of the item: pushes are
 * idempotent by (source, id)), `content` (else `title`, else `summary`), and optionally `url`,
 * `published_at`, `urgency`, `tickers`, `sentiment` (as `fns articles ingest`: what is left out is derived).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { parseArticle } from '../ingest/parse.js';
import { boundedId, EXTERNAL_ID_MAX_LENGTH, SOURCE_NAME, sourcedArticle } from '../sources/pipeline.js';
import type { SourcedItem, SourceStore } from '../store/ports.js';
import { storeOffers, type BatchAnswer, type LineOutcome } from '../ingest/pipeline.js';

/** Default body cap of one push. */
export const PUSH_MAX_BYTES = 1024 * 1024;
/** At most this many lines (articles) per push: one push is one write transaction. */
export const PUSH_MAX_LINES = 1000;

export type PushFormat = 'ndjson' | 'json';

/** One line (NDJSON: its 1-based line number; JSON array: its 1-based position) read and checked. */
export type PushLine = { line: number; item: SourcedItem } | { line: number; error: string };

/** One line's outcome: the pipeline's (src/ingest/pipeline.ts), as every ingestion path answers. */
export type PushResult = LineOutcome;

export type PushAnswer = BatchAnswer;

/** The body could not be read as NDJSON or JSON at all (the whole request is refused, 400). */
export class PushBodyError extends Error {}

/** The presented token equals the configured one; constant time whatever the lengths. */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The bearer token of an Authorization header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return m?.[1];
}

const PUSH_FIELDS = new Set(['source', 'id', 'title', 'summary']);

/** One line's value checked and completed (the article fields as `fns articles ingest` reads them). */
export function readPushLine(value: unknown): { item: SourcedItem } | { error: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'must be a JSON object' };
  const o = value as Record<string, unknown>;
  if (typeof o.source !== 'string' || !SOURCE_NAME.test(o.source)) {
    return { error: 'source is required: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' };
  }
  if (typeof o.id !== 'string' || o.id.trim() === '' || o.id.length > EXTERNAL_ID_MAX_LENGTH || o.id.includes('\u0000')) {
    return { error: `id is required: the source's own id of the item, a non-empty string of at most ${EXTERNAL_ID_MAX_LENGTH} characters` };
  }
  for (const f of ['title', 'summary'] as const) {
    if (o[f] !== undefined && o[f] !== null && typeof o[f] !== 'string') return { error: `${f} must be a string` };
  }
  const title = typeof o.title === 'string' && o.title.trim() !== '' ? o.title : undefined;
  const summary = typeof o.summary === 'string' && o.summary.trim() !== '' ? o.summary : undefined;
  if (o.content !== undefined && (title !== undefined || summary !== undefined)) return { error: 'give content, or title and/or summary, not both' };
  if (o.url !== undefined && o.url !== null && (typeof o.url !== 'string' || !/^https?:\/\//i.test(o.url) || !URL.canParse(o.url))) {
    return { error: 'url must be an absolute http(s) URL' };
  }
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!PUSH_FIELDS.has(k)) fields[k] = v;
  if (fields.content === undefined) {
    const text = title ?? summary;
    if (text === undefined) return { error: 'content (or title, or summary) is required and must be a non-empty string' };
    fields.content = text;
  }
  const r = parseArticle(fields);
  if (!r.ok) return { error: r.error };
  return { item: sourcedArticle(o.source, boundedId(o.id.trim()), r.article) };
}

/**
 * The body's lines. NDJSON: one JSON object per line, blank lines skipped; a body none of whose lines
 * is JSON is not NDJSON (PushBodyError). JSON: an array of objects (or one object).
 */
export function readPushBody(text: string, format: PushFormat): PushLine[] {
  const values: { line: number; value?: unknown; error?: string }[] = [];
  if (format === 'json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new PushBodyError(`the body is not JSON (${(e as Error).message}); send a JSON array of articles, or NDJSON as application/x-ndjson`);
    }
    const list = Array.isArray(parsed) ? parsed : [parsed];
    list.forEach((value, i) => values.push({ line: i + 1, value }));
  } else {
    let parsedAny = false;
    text.split('\n').forEach((raw, i) => {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '') return;
      try {
        values.push({ line: i + 1, value: JSON.parse(line) });
        parsedAny = true;
      } catch (e) {
        values.push({ line: i + 1, error: `not valid JSON (${(e as Error).message})` });
      }
    });
    if (!parsedAny && values.length > 0) throw new PushBodyError('the body is not NDJSON: no line is a JSON object (one article per line)');
  }
  if (values.length === 0) throw new PushBodyError('the body holds no article (one JSON object per line, or a JSON array)');
  if (values.length > PUSH_MAX_LINES) throw new PushBodyError(`at most ${PUSH_MAX_LINES} articles per push; split the body`);
  return values.map((v): PushLine => {
    if (v.error !== undefined) return { line: v.line, error: v.error };
    const r = readPushLine(v.value);
    return 'item' in r ? { line: v.line, item: r.item } : { line: v.line, error: r.error };
  });
}

/** Stores the valid lines (one ingest, one transaction) and answers per line, in body order (the pipeline's store step). */
export async function pushArticles(
  lines: PushLine[],
  store: Pick<SourceStore, 'ingestItems'>,
  clock: () => number,
  onStored?: (ids: string[]) => void,
): Promise<PushAnswer> {
  return storeOffers(lines, store, clock, onStored);
}
