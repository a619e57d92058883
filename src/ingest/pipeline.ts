/**
 * The one ingestion pipeline of `fns articles ingest`, the admin push and the poller: parse, enrich, identity
 * (`identify`), store (`storeOffers`) and publish (`onStored`), each over a batch so a caller may yield between
 * them. Every path answers per line `stored`, `duplicate` or `invalid`. An item's unexpected error is that item's
 * `invalid` answer, never its batch's, and names only the error's class (its message may quote the input).
 */
import { createHash } from 'node:crypto';
import type { DuplicateReason, NewArticle, SourcedItem, SourceStore } from '../store/ports/index.js';
import { errorClass } from '../store/ports/errors.js';
import { eachInSlices } from '../runtime/slices.js';
import { articleLink, identify, OPERATOR_SOURCE } from './identity.js';
import { parseLine } from './parse.js';
import { LONE_SURROGATE } from './utf8.js';

/** Longer external ids are stored as `sha256:<hex>`: a record stays small and indexable whatever a guid holds. */
export const EXTERNAL_ID_MAX_LENGTH = 256;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * A bounded id: as given, or its SHA-256 when longer than EXTERNAL_ID_MAX_LENGTH or holding a NUL character (a feed's
 * guid may: PostgreSQL cannot store it as text, and the whole poll failed with it). A lone surrogate would be stored
 * as U+FFFD, making two guids one: such an id is the SHA-256 of its UTF-16 code units, which keeps them apart.
 */
export function boundedId(id: string): string {
  if (LONE_SURROGATE.test(id)) return `sha256:${createHash('sha256').update(Buffer.from(id, 'utf16le')).digest('hex')}`;
  return id.length <= EXTERNAL_ID_MAX_LENGTH && !id.includes('\u0000') ? id : `sha256:${sha256(id)}`;
}

/** A line (or feed item) after parse, enrich and identity: an item to store, or why not (`errClass`: `isolated`). */
export type Offer = { line: number; item: SourcedItem } | { line: number; error: string; errClass?: string };

/** An item that failed with an unexpected error: its line and the error's class (what may be logged of it). */
export interface ItemFailure {
  line: number;
  errClass: string;
}

function itemFailedError(errClass: string): string {
  return `could not be processed (an unexpected ${errClass} in the service, not a fault of the line); nothing of it was stored`;
}

/** `build()`'s offer; an unexpected error it throws is that line's `invalid` answer, so the other lines go on. */
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

/** An empty answer, to add an input's chunks' answers to in order. */
export const emptyAnswer = (): BatchAnswer => ({ stored: 0, duplicates: 0, invalid: 0, results: [] });

/** Adds a chunk's answer to `total`. */
export function addAnswer(total: BatchAnswer, part: BatchAnswer): void {
  total.stored += part.stored;
  total.duplicates += part.duplicates;
  total.invalid += part.invalid;
  for (const r of part.results) total.results.push(r);
}

/**
 * An operator's checked article with its identity: scoped to its `source`, else OPERATOR_SOURCE (so source-less
 * repeats are found), but showing only its own `source` or null (`operator` is our tool, not a publisher).
 * Its id is its canonical link, else a hash of text and published time: the same line again is the same item.
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
  return isolated(line, () => {
    const parsed = parseLine(raw);
    return parsed.ok ? { line, item: operatorItem(parsed.article) } : { line, error: parsed.error };
  });
}

/**
 * Stores the valid offers (one `ingestItems`) and answers per line in input order; stored ids go to
 * `onStored`, each line that failed with an unexpected error (offer or dedup step) to `onFailed`, once.
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
  const invalid = (line: number, error: string, errClass: string | undefined) => {
    answer.invalid++;
    answer.results.push({ line, status: 'invalid', error });
    if (errClass !== undefined) onFailed?.({ line, errClass });
  };
  let v = 0;
  // In slices: a large poll is thousands of answers to make.
  await eachInSlices(offers, (o) => {
    if ('error' in o) return invalid(o.line, o.error, o.errClass);
    const outcome = outcomes[v++]!;
    const who = { source: o.item.source, external_id: o.item.externalId };
    if (outcome.status === 'failed') invalid(o.line, itemFailedError(outcome.errClass), outcome.errClass);
    else if (outcome.status === 'stored') {
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
