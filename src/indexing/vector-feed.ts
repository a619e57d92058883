/**
 * Brings a VectorIndex up to date with the store, page by page; the cursor only moves forward: no vector is read twice.
 */
import { yieldToEventLoop } from '../search/rank.js';
import type { StorePorts } from '../store/ports/index.js';
import type { VectorIndex } from './vector-index.js';

/** Vectors per store page while loading (one short store call each). */
const DEFAULT_LOAD_PAGE = 1_000;

/** Where the index is in the store's sequence of vectors (`VectorStore.vectorsAfter`). */
export interface FeedCursor {
  /** The last vector rowid read (0: none yet). */
  readonly rowid: number;
  /** The article id stored under `rowid` (a saved index's check that it is of this database). */
  readonly id: string;
}

export interface VectorFeedOptions {
  /** Vectors per store page (default {@link DEFAULT_LOAD_PAGE}). */
  pageSize?: number;
}

export class VectorFeed {
  private at: FeedCursor = { rowid: 0, id: '' };
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly vectors: Pick<StorePorts['vectors'], 'vectorsAfter'>,
    private readonly modelId: string,
    private readonly index: VectorIndex,
    private readonly options: VectorFeedOptions = {},
  ) {}

  get cursor(): FeedCursor {
    return this.at;
  }

  get pending(): Promise<void> | undefined {
    return this.refreshing;
  }

  /** Continues after `cursor` (a saved index restored into the index holds every vector up to it). */
  resumeAt(cursor: FeedCursor): void {
    this.at = cursor;
  }

  /** Loads vectors stored since the last refresh; one load at a time. */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Adds each page's vectors past the cursor, which moves to the last of them. */
  private async load(): Promise<void> {
    const pageSize = Math.max(1, this.options.pageSize ?? DEFAULT_LOAD_PAGE);
    for (;;) {
      const page = await this.vectors.vectorsAfter(this.modelId, this.at.rowid, pageSize);
      const fresh = page.filter((v) => v.rowid > this.at.rowid);
      const last = fresh.at(-1);
      if (last) this.at = { rowid: last.rowid, id: last.id };
      await this.index.add(fresh, page.length);
      if (page.length < pageSize) return;
      // Each page is one synchronous read on SQLite: let requests in between.
      await yieldToEventLoop();
    }
  }
}
