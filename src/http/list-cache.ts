/**
 * The first page of GET /v1/news per shape (tickers, window, urgency, limit), served only under the store
 * generation it was read in (src/store/ports/changes.ts) and while its oldest article is inside the window.
 */
import { decodeTime } from 'ulid';
import type { Urgency } from '../contract/index.js';

export interface PageVariant {
  withTickers: boolean;
  lookbackMs: number;
  urgency: Urgency | undefined;
  limit: number;
}

/** A page ready to write: the NewsList body up to the end of `articles`; `next` and `}` are added per request. */
export interface Page {
  head: Buffer;
  count: number;
  /** The last article's id (on a newest-first page the oldest, the `before` of `next`); undefined for an empty page. */
  lastId: string | undefined;
  /** The oldest article's receive time (its id's ULID time), ms; undefined for an empty page. */
  oldestMs: number | undefined;
}

/** Distinct variants kept at most (2 ticker variants × windows × 4 urgency filters × limits). */
const LIST_CACHE_MAX_ENTRIES = 256;

/** The NewsList head of articles already serialised as Article JSON (newest first when cached). */
export function pageOf(articles: string[]): Page {
  const last = articles[articles.length - 1];
  const lastId = last === undefined ? undefined : (JSON.parse(last) as { id: string }).id;
  return {
    head: Buffer.from(`{"count":${articles.length},"articles":[${articles.join(',')}]`),
    count: articles.length,
    lastId,
    oldestMs: lastId === undefined ? undefined : decodeTime(lastId),
  };
}

function stillInWindow(page: Page, afterMs: number): boolean {
  return page.oldestMs === undefined || page.oldestMs > afterMs;
}

interface Entry {
  generation: number;
  page?: Page;
  pending: Promise<Page>;
}

export class FirstPageCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly generation: () => number,
    private readonly maxEntries: number = LIST_CACHE_MAX_ENTRIES,
  ) {}

  /** The first page for a window after `afterMs` (exclusive): sync when cached and fresh; misses share a load. */
  get(variant: PageVariant, afterMs: number, load: () => Promise<string[]>): Page | Promise<Page> {
    const id = `${variant.withTickers ? 't' : 'p'}${variant.lookbackMs}|${variant.urgency ?? ''}|${variant.limit}`;
    const g = this.generation();
    const entry = this.entries.get(id);
    if (entry && entry.generation === g) {
      if (entry.page) {
        if (stillInWindow(entry.page, afterMs)) return entry.page;
      } else {
        // A load of this generation is under way: share it unless it comes back out of the window.
        return entry.pending.then((page) => (stillInWindow(page, afterMs) ? page : this.fill(id, g, load)));
      }
    }
    return this.fill(id, g, load);
  }

  private fill(id: string, generation: number, load: () => Promise<string[]>): Promise<Page> {
    const pending = load().then(pageOf);
    const entry: Entry = { generation, pending };
    this.entries.delete(id);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(id, entry);
    pending.then(
      (page) => void (entry.page = page),
      () => void (this.entries.get(id) === entry && this.entries.delete(id)),
    );
    return pending;
  }
}
