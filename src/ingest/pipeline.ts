/**
 * The one ingestion pipeline: `fns articles ingest` (src/cli/operator.ts), the admin push
 * (src/ops/push.ts) and the source poller (src/sources/poller.ts) take the same steps, each a small
 * function over a batch, so a caller may yield between them:
 *
 *   parse    each path reads its own input format into article fields, or an `invalid` error per line
 *            (src/ingest/parse.ts for operator lines, src/ops/push.ts, src/sources/feed);
 *   enrich   what a line leaves out is derived (src/enrich: urgency, sentiment, tickers);
 *   identity canonical link, repeat key, near keys (src/ingest/identity.ts): `identify`;
 *   store    `storeOffers`: one `ingestItems` (exact, repeat and near dedup, insert, carriers) in one
 *            write transaction;
 *   publish  the stored ids go to `onStored` (the service wakes its stream; other processes' streams
 *            read the store's change feed).
 *
 * Every path answers per line with the same outcomes: `stored` (with the new id), `duplicate` (with
 * the reason and the stored article's id) or `invalid` (with the error).
 *
 * One item's unexpected error (a throw of its enrichment, identity or dedup step, not a validation
 * error) is that item's outcome, never its batch's: it is answered `invalid` with its line and the
 * error's class (`itemFailedError`; never the error's message, which may quote the input), reported
 * once to the caller's `onFailed` (to log), and every other item of the batch is stored.
 */
import { createHash } from 'node:crypto';
import type { DuplicateReason, NewArticle, SourcedItem, SourceStore } from '../store/ports/index.js';
import { errorClass } from '../store/ports/errors.js';
import { eachInSlices } from '../runtime/slices.js';
import { articleLink, identify, OPERATOR_SOURCE } from './identity.js';
import { parseArticle } from './parse.js';

/** External ids longer than this are stored as `sha256:<hex>` of the id. */
export const EXTERNAL_ID_MAX_LENGTH = 256;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A bounded id: as given, or its SHA-256 when longer than EXTERNAL_ID_MAX_LENGTH. */
export function boundedId(id: string): string {
  return id.length <= EXTERNAL_ID_MAX_LENGTH ? id : `sha256:${sha256(id)}`;
}

/**
 * One input line (or feed item, by position) after parse, enrich and identity: an item for the store, or
 * why not (`errClass`: it failed with an unexpected error of that class, see `isolated`).
 */
export type Offer = { line: number; item: SourcedItem } | { line: number; error: string; errClass?: string };

/** An item that failed with an unexpected error: its line and the error's class (what may be logged of it). */
export interface ItemFailure {
  line: number;
  errClass: string;
}

/** The `invalid` answer of an item that failed with an unexpected error of class `errClass`. */
function itemFailedError(errClass: string): string {
  return `could not be processed (an unexpected ${errClass} in the service, not a fault of the line); nothing of it was stored`;
}

/**
 * `build()`, the steps that make one line's offer; an unexpected error it throws is that line's answer
 * (`invalid`, with the error's class), so the other lines of the input go on.
 */
export function isolated(line: number, build: () => Offer): Offer {
  try {
    return build();
  } catch (e) {
    const errClass = errorClass(e);
    return { line, error: itemFailedError(errClass), errClass };
  }
}

export type LineOutcome =
  | { line: number; status: 'stored'; source: string; external_id: string; id: string; received_at: string }
  | { line: number; status: 'duplicate'; source: string; external_id: string; reason: DuplicateReason; id: string }
  | { line: number; status: 'invalid'; error: string };

export interface BatchAnswer {
  stored: number;
  duplicates: number;
  invalid: number;
  results: LineOutcome[];
}

/** An answer with no line yet (to add the answers of an input's chunks to, in order). */
export const emptyAnswer = (): BatchAnswer => ({ stored: 0, duplicates: 0, invalid: 0, results: [] });

/** Adds the answer of the input's next chunk to `total`. */
export function addAnswer(total: BatchAnswer, part: BatchAnswer): void {
  total.stored += part.stored;
  total.duplicates += part.duplicates;
  total.invalid += part.invalid;
  for (const r of part.results) total.results.push(r);
}

/**
 * An operator's article (a checked `fns articles ingest` line) with its identity. Its source scope is
 * the line's `source`, else OPERATOR_SOURCE, so repeats of lines without a source are found too; the
 * article shows the line's `source`, or null (no wire is known: `operator` names our own tool, not a
 * publisher). Its id at that source: its canonical link, else a hash of its text and published time,
 * so the same line ingested again is the same item.
 */
export function operatorItem(article: NewArticle): SourcedItem {
  const shown = article.source ?? null;
  const link = articleLink(article.url);
  const externalId =
    link !== null ? boundedId(link) : `sha256:${sha256(`${article.content}\n${article.published_at ?? ''}`)}`;
  return identify(shown ?? OPERATOR_SOURCE, externalId, article, shown);
}

/** An operator's NDJSON line (its 1-based number and text): parse, enrich and identity. */
export function operatorOffer(line: number, raw: string): Offer {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { line, error: `not valid JSON (${(err as Error).message})` };
  }
  return isolated(line, () => {
    const parsed = parseArticle(value);
    return parsed.ok ? { line, item: operatorItem(parsed.article) } : { line, error: parsed.error };
  });
}

/**
 * Stores the valid offers (one `ingestItems`, one write transaction) and answers per line, in input
 * order; the ids stored go to `onStored` (publish); each line that failed with an unexpected error (its
 * offer, or its dedup step in the store) goes to `onFailed`, once.
 */
export async function storeOffers(
  offers: readonly Offer[],
  store: Pick<SourceStore, 'ingestItems'>,
  clock: () => number,
  onStored?: (ids: string[]) => void,
  onFailed?: (failure: ItemFailure) => void,
): Promise<BatchAnswer> {
  const valid = offers.filter((o): o is { line: number; item: SourcedItem } => 'item' in o);
  const outcomes =
    valid.length > 0
      ? await store.ingestItems(
          valid.map((o) => o.item),
          clock,
        )
      : [];
  const answer = emptyAnswer();
  const storedIds: string[] = [];
  let v = 0;
  // In slices (a poll of 5,000 items is 5,000 answers to make): same answers, same order.
  await eachInSlices(offers, (o) => {
    if ('error' in o) {
      answer.invalid++;
      answer.results.push({ line: o.line, status: 'invalid', error: o.error });
      if (o.errClass !== undefined) onFailed?.({ line: o.line, errClass: o.errClass });
      return;
    }
    const outcome = outcomes[v++]!;
    const who = { source: o.item.source, external_id: o.item.externalId };
    if (outcome.status === 'failed') {
      answer.invalid++;
      answer.results.push({ line: o.line, status: 'invalid', error: itemFailedError(outcome.errClass) });
      onFailed?.({ line: o.line, errClass: outcome.errClass });
    } else if (outcome.status === 'stored') {
      answer.stored++;
      storedIds.push(outcome.id);
      answer.results.push({ line: o.line, status: 'stored', ...who, id: outcome.id, received_at: outcome.received_at });
    } else {
      answer.duplicates++;
      answer.results.push({ line: o.line, status: 'duplicate', ...who, reason: outcome.reason, id: outcome.id });
    }
  });
  if (storedIds.length > 0) onStored?.(storedIds);
  return answer;
}
