/**
 * Push (POST /admin/v1/articles) without the sockets (admin.ts has the HTTP side): lines read, checked and stored
 * through the sources' ingest, answered per line; idempotent by (`source`, `id`); fields as `fns articles ingest`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ARTICLE_FIELDS, parseArticle, unknownFieldsError } from '../ingest/parse.js';
import { ChunkedWorker, OffThreadUnavailable } from '../runtime/off-thread.js';
import { eachChunk, sliceTurns, type SliceBudget } from '../runtime/slices.js';
import { decodeUtf8, invalidUtf8Offset, lineOfOffset, loneSurrogateError, notUtf8Message } from '../ingest/utf8.js';
import { boundedId, EXTERNAL_ID_MAX_LENGTH, SOURCE_NAME, sourcedArticle } from '../sources/pipeline.js';
import type { SourcedItem, SourceStore } from '../store/ports/index.js';
import {
  addAnswer,
  emptyAnswer,
  isolated,
  storeOffers,
  type BatchAnswer,
  type ItemFailure,
  type Offer,
} from '../ingest/pipeline.js';

/** Default body cap of one push. */
export const PUSH_MAX_BYTES = 1024 * 1024;
/**
 * At most this many lines (articles) per push (stored in short write transactions: src/store/ports/ingest-slice.ts).
 */
export const PUSH_MAX_LINES = 1000;

export type PushFormat = 'ndjson' | 'json';

/** One line read and checked (1-based line or array position); an unexpected error of its checks is its `invalid`. */
export type PushLine = Offer;

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
  const lone = loneSurrogateError(value);
  if (lone !== null) return { error: lone };
  const unknown = unknownFieldsError(value, PUSH_FIELDS, ARTICLE_FIELDS);
  if (unknown !== null) return { error: unknown };
  const o = value as Record<string, unknown>;
  if (typeof o.source !== 'string' || !SOURCE_NAME.test(o.source)) {
    return { error: 'source is required: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' };
  }
  if (
    typeof o.id !== 'string' ||
    o.id.trim() === '' ||
    o.id.length > EXTERNAL_ID_MAX_LENGTH ||
    o.id.includes('\u0000')
  ) {
    return {
      error: `id is required: the source's own id of the item, a non-empty string of at most ${EXTERNAL_ID_MAX_LENGTH} characters`,
    };
  }
  for (const f of ['title', 'summary'] as const) {
    if (o[f] !== undefined && o[f] !== null && typeof o[f] !== 'string') return { error: `${f} must be a string` };
  }
  const title = typeof o.title === 'string' && o.title.trim() !== '' ? o.title : undefined;
  const summary = typeof o.summary === 'string' && o.summary.trim() !== '' ? o.summary : undefined;
  if (o.content !== undefined && (title !== undefined || summary !== undefined))
    return { error: 'give content, or title and/or summary, not both' };
  if (
    o.url !== undefined &&
    o.url !== null &&
    (typeof o.url !== 'string' || !/^https?:\/\//i.test(o.url) || !URL.canParse(o.url))
  ) {
    return { error: 'url must be an absolute http(s) URL' };
  }
  // A null-prototype copy: a `__proto__` key could only be a field of its own, never the prototype.
  const fields: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(o)) if (!PUSH_FIELDS.has(k)) fields[k] = v;
  if (fields.content === undefined) {
    const text = title ?? summary;
    if (text === undefined)
      return { error: 'content (or title, or summary) is required and must be a non-empty string' };
    fields.content = text;
  }
  const r = parseArticle(fields);
  if (!r.ok) return { error: r.error };
  return { item: sourcedArticle(o.source, boundedId(o.id.trim()), r.article) };
}

type RawLine = { line: number; value?: unknown; error?: string };

/**
 * The body's lines. NDJSON: each line decoded by itself (not UTF-8: that line is `invalid`), blanks skipped, a body
 * with no JSON line a PushBodyError. JSON: an array or one object; not UTF-8: PushBodyError. Checked in slices
 * with event-loop turns between them (src/runtime/slices.ts); same lines, same order.
 */
export async function readPushBody(
  body: Uint8Array | string,
  format: PushFormat,
  budget: SliceBudget = {},
): Promise<PushLine[]> {
  let bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  // A byte order mark is no part of the first line.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  const values: RawLine[] = [];
  const turns = sliceTurns(budget);
  if (format === 'json') {
    const text = decodeUtf8(bytes);
    if (text === null) {
      const at = lineOfOffset(bytes, invalidUtf8Offset(bytes));
      throw new PushBodyError(
        `the body is not valid UTF-8 (line ${at.line}, byte ${at.column}); a JSON body must be UTF-8 text`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new PushBodyError(
        `the body is not JSON (${(e as Error).message}); send a JSON array of articles, or NDJSON as application/x-ndjson`,
      );
    }
    const list = Array.isArray(parsed) ? parsed : [parsed];
    list.forEach((value, i) => values.push({ line: i + 1, value }));
  } else {
    let parsedAny = false;
    let undecodable = 0;
    let line = 0;
    for (let start = 0; start <= bytes.length;) {
      await turns();
      const nl = bytes.indexOf(0x0a, start);
      const end = nl === -1 ? bytes.length : nl;
      line++;
      let raw = bytes.subarray(start, end);
      start = end + 1;
      if (raw.length > 0 && raw[raw.length - 1] === 0x0d) raw = raw.subarray(0, raw.length - 1);
      const text = decodeUtf8(raw);
      if (text === null) {
        undecodable++;
        values.push({ line, error: notUtf8Message(raw) });
        continue;
      }
      if (text.trim() === '') continue;
      try {
        values.push({ line, value: JSON.parse(text) });
        parsedAny = true;
      } catch (e) {
        values.push({ line, error: `not valid JSON (${(e as Error).message})` });
      }
    }
    if (!parsedAny && values.length > undecodable && values.length > 0)
      throw new PushBodyError('the body is not NDJSON: no line is a JSON object (one article per line)');
  }
  if (values.length === 0)
    throw new PushBodyError('the body holds no article (one JSON object per line, or a JSON array)');
  if (values.length > PUSH_MAX_LINES)
    throw new PushBodyError(`at most ${PUSH_MAX_LINES} articles per push; split the body`);
  const out: PushLine[] = [];
  for (const v of values) {
    await turns();
    if (v.error !== undefined) {
      out.push({ line: v.line, error: v.error });
      continue;
    }
    const line = v.line;
    out.push(
      isolated(line, () => {
        const r = readPushLine(v.value);
        return 'item' in r ? { line, item: r.item } : { line, error: r.error };
      }),
    );
  }
  return out;
}

/** Bodies at least this large are read on a worker thread (readPushBodyOffThread). */
export const PUSH_OFF_THREAD_MIN_BYTES = 64 * 1024;

/** Lines per chunk handed on (the worker's chunk size too: push-worker.mjs). */
export const PUSH_CHUNK = 100;

let worker: ChunkedWorker<{ body: Uint8Array; format: PushFormat }, PushLine, true> | null = null;

/**
 * `readPushBody` chunk by chunk to `take`, in body order; on a worker thread (push-worker.mjs) from
 * PUSH_OFF_THREAD_MIN_BYTES, keeping the parse and its garbage off the event loop. PushBodyError precedes any chunk.
 */
export async function readPushBodyOffThread(
  body: Uint8Array,
  format: PushFormat,
  take: (lines: PushLine[]) => void | Promise<void>,
  budget: SliceBudget = {},
): Promise<void> {
  if (body.length >= PUSH_OFF_THREAD_MIN_BYTES) {
    worker ??= new ChunkedWorker(new URL('./push-worker.mjs', import.meta.url), (e) =>
      e.name === 'PushBodyError' ? new PushBodyError(e.message) : Object.assign(new Error(e.message), { name: e.name }),
    );
    try {
      await worker.stream({ body, format }, take);
      return;
    } catch (e) {
      if (!(e instanceof OffThreadUnavailable)) throw e;
    }
  }
  const lines = await readPushBody(body, format, budget);
  await eachChunk(lines, PUSH_CHUNK, take);
}

/** Stops the push reader's worker thread (tests; a process exits without it anyway). */
export async function stopPushReader(): Promise<void> {
  const w = worker;
  worker = null;
  await w?.stop();
}

/**
 * Each chunk of lines is stored before the next is read, so a large body is never all on the heap; answers per line,
 * in body order. A line failing unexpectedly is `invalid` alone (and goes to `onFailed`). Throws PushBodyError
 * (nothing stored) or the store's error (earlier chunks stay stored).
 */
export async function pushArticles(
  body: Uint8Array,
  format: PushFormat,
  store: Pick<SourceStore, 'ingestItems'>,
  clock: () => number,
  onStored?: (ids: string[]) => void,
  onFailed?: (failure: ItemFailure) => void,
): Promise<PushAnswer> {
  const answer = emptyAnswer();
  await readPushBodyOffThread(body, format, async (lines) =>
    addAnswer(answer, await storeOffers(lines, store, clock, onStored, onFailed)),
  );
  return answer;
}
