/**
 * Loads the index: the saved approximate index when usable, then every newer vector. In the background
 * (`start()`) a failed load is retried and search is refused until ready, never answered from part of the archive.
 */
import { errorText, type Log } from '../domain/log.js';
import { isStoreBusy } from '../store/ports/errors.js';
import type { SavedIndex } from './saved-index.js';
import type { VectorFeed } from './vector-feed.js';
import type { VectorIndex } from './vector-index.js';

/** After a failed background load, the next attempt (ms). */
const DEFAULT_LOAD_RETRY_MS = 5_000;
/** After a load that found the store busy (another process's write lock), the next attempt (ms). */
const BUSY_RETRY_MS = 200;

/** Search asked before the index has loaded the archive: the contract's 503 with Retry-After. */
export class SearchIndexLoadingError extends Error {
  override name = 'SearchIndexLoadingError';
  /** Read by the HTTP layer (isDependencyUnavailable): a 503 serviceUnavailable, retry shortly. */
  readonly unavailable = true;
}

export type LoadState = 'idle' | 'loading' | 'ready';

export interface IndexLoaderOptions {
  /** After a failed background load, the next attempt (ms; default {@link DEFAULT_LOAD_RETRY_MS}). */
  retryMs?: number;
  log?: Log;
}

export class IndexLoader {
  private state: LoadState = 'idle';
  private background = false;
  private closed = false;
  private loading: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;

  constructor(
    private readonly index: VectorIndex,
    private readonly feed: VectorFeed,
    private readonly saved: SavedIndex,
    private readonly options: IndexLoaderOptions = {},
  ) {}

  get ready(): boolean {
    return this.state === 'ready';
  }

  /** The load's state, and why the last attempt failed while it is not ready. */
  status(): { state: LoadState; error?: string } {
    return { state: this.state, ...(this.lastError && this.state !== 'ready' ? { error: this.lastError } : {}) };
  }

  /** Loads in the background, retrying failures; resolves when the index is ready. */
  start(): Promise<void> {
    this.background = true;
    return this.load();
  }

  /**
   * Resolves once ready; while a background load runs, refuses at once (SearchIndexLoadingError); else loads and waits.
   */
  async untilReady(): Promise<void> {
    if (this.state === 'ready') return;
    if (this.background) throw new SearchIndexLoadingError(`search index loading (${this.index.size} vectors so far)`);
    await this.load();
  }

  /** Stops retries and background work, then saves the approximate index if it has new vectors. Never rejects. */
  async close(): Promise<void> {
    this.closed = true;
    this.index.close();
    clearTimeout(this.retryTimer);
    this.saved.stop();
    await this.saved.save().catch(() => {});
  }

  private load(): Promise<void> {
    this.loading ??= this.firstLoad();
    return this.loading;
  }

  private async firstLoad(): Promise<void> {
    this.state = 'loading';
    const started = performance.now();
    let restored = false;
    for (;;) {
      try {
        if (!restored && this.feed.cursor.rowid === 0) restored = await this.saved.restore();
        await this.feed.refresh();
        break;
      } catch (err) {
        await this.failed(err);
      }
    }
    this.index.loaded();
    this.state = 'ready';
    this.lastError = undefined;
    this.options.log?.info(
      {
        vectors: this.index.size,
        mode: this.index.mode === 'approximate' ? 'approximate (HNSW)' : 'exact',
        ms: Math.round(performance.now() - started),
      },
      'index ready',
    );
    if (this.background && !this.closed) this.saved.saveNowAndThen();
  }

  /**
   * A foreground load rethrows (a 503 when the store is unavailable); a background one waits to retry (throws once
   * closed).
   */
  private async failed(err: unknown): Promise<void> {
    if (!this.background || this.closed) {
      this.loading = undefined;
      this.state = 'idle';
      throw err;
    }
    this.lastError = errorText(err);
    const retryMs = isStoreBusy(err) ? BUSY_RETRY_MS : (this.options.retryMs ?? DEFAULT_LOAD_RETRY_MS);
    this.options.log?.warn(
      { vectors: this.index.size, err: this.lastError, retryMs },
      'loading the index failed; retrying',
    );
    await new Promise<void>((resolve) => {
      this.retryTimer = setTimeout(resolve, retryMs);
      this.retryTimer.unref();
    });
    if (this.closed) throw new SearchIndexLoadingError('search index closed before it was ready');
  }
}
