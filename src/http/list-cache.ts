/**
 * The first page of GET /v1/news, cached: most requests ask for the newest `limit` articles of their
 * plan's window, which change only when an article arrives. A page is keyed by what shapes it (tickers
 * or not, the lookback window, the urgency filter, the limit) and served only while
 *
 * - the store's generation is the one it was read under (src/store/ports/changes.ts: a new article,
 *   from this process or another, moves it; seen at once, or within that module's bound), and
 * - its oldest article is still inside the window at the time of the request (the window slides: an
 *   article that has left it is never served; nothing can enter it without a new generation).
 *
 * Requests with a `since` inside the window, a cursor (`after`, `before`) or a `tickers` filter are not
 * first pages and go to the store every time. A cached page holds the articles only: the `next` link
 * (which repeats the request's own parameters) is added per request.
 */
import { decodeTime } from 'ulid';
import type { Urgency } from '../contract/index.js';

export interface PageVariant {
  withTickers: boolean;
  lookbackMs: number;
  urgency: Urgency | undefined;
  limit: number;
}

/**
 * A page, ready to write: the NewsList body up to the end of `articles` (`{"count":N,"articles":[…]`);
 * `next`, which depends on how the request was written (src/http/paging.ts), and `}` follow per request.
 */
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

/** May `page`, read at an earlier time, be served for a window that now starts after `afterMs`? */
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

  /**
   * The first page of `variant` for a window starting after `afterMs` (exclusive, as the store reads
   * it): from the cache (synchronously) when fresh, else from `load`. Concurrent misses share one load.
   */
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
