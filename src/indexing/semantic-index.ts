/**
 * The semantic index: every vector of the current model in memory, for search (./vector-index.ts:
 * exact up to `annThreshold`, approximate past it). Vectors carry their model id; the index loads the
 * ones the store holds and, on each search, those stored since (by this or any other process). The
 * approximate index is saved beside the store with `persistDir` (./persist.ts). The service loads the
 * index in the background at start-up (`start()`): until it is ready, search answers the contract's 503
 * with Retry-After, never results from part of the archive.
 */
import { errorText, type Log } from '../domain/log.js';
import { DEFAULT_HNSW, HnswIndex, type HnswOptions } from '../search/ann.js';
import type { Embedder } from '../search/index.js';
import { HybridSearch, type HybridOptions, type SearchOptions } from '../search/hybrid.js';
import { cachedQueryEmbedder } from '../search/query-cache.js';
import { yieldToEventLoop, type SliceOptions } from '../search/rank.js';
import type { StoredArticle } from '../domain/articles.js';
import { isStoreBusy } from '../store/ports/errors.js';
import { readSnapshot, snapshotPaths, SnapshotUnusable, writeSnapshot } from './persist.js';
import type { StorePorts } from '../store/ports/index.js';
import { VectorIndex } from './vector-index.js';

/** Vectors read from the store per page while loading (each page is one short store call). */
export const DEFAULT_LOAD_PAGE = 1_000;
/** After a failed background load (the database down at start-up), the next attempt (ms). */
export const DEFAULT_LOAD_RETRY_MS = 5_000;

export interface SemanticIndexOptions extends HybridOptions {
  /** Past this many vectors, the approximate index answers (default DEFAULT_ANN_THRESHOLD). */
  annThreshold?: number;
  hnsw?: HnswOptions;
  /** Threads inserting into the HNSW graph, each batch (default 1: the other core stays free). */
  buildThreads?: number;
  /** Vectors per store page while loading (default {@link DEFAULT_LOAD_PAGE}). */
  pageSize?: number;
  /** How ranking and index building share the event loop (slice length, clock). */
  slice?: SliceOptions;
  retryMs?: number;
  log?: Log;
  /** Query vectors kept for repeated queries (default DEFAULT_QUERY_CACHE; 0: none). */
  queryCacheSize?: number;
  /**
   * Where the approximate index is saved (src/indexing/persist.ts), e.g. DATA_DIR/search-index: a
   * start loads it and adds only newer vectors. Unset: never saved (tests, tools).
   */
  persistDir?: string;
  /** While running, how often to look whether enough is new to save (default {@link DEFAULT_SAVE_EVERY_MS}). */
  saveEveryMs?: number;
}

/**
 * A running service looks every 15 minutes whether to save the approximate index: when at least
 * {@link SAVE_MIN_NEW_VECTORS} (or 5% of the index) were added since the last save. Also saved after a
 * build and at shutdown.
 */
export const DEFAULT_SAVE_EVERY_MS = 15 * 60_000;
export const SAVE_MIN_NEW_VECTORS = 10_000;

/** Search asked before the index has loaded the archive: the contract's 503 with Retry-After. */
export class SearchIndexLoadingError extends Error {
  override name = 'SearchIndexLoadingError';
  /** Read by the HTTP layer (isDependencyUnavailable): a 503 serviceUnavailable, retry shortly. */
  readonly unavailable = true;
}

export interface SemanticIndexStatus {
  state: 'idle' | 'loading' | 'ready';
  vectors: number;
  mode: 'exact' | 'approximate';
  /** Why the last background load attempt failed (it is retried). */
  error?: string;
}

export class SemanticIndex {
  /** The vectors, exact or approximate. */
  private readonly vectors: VectorIndex;
  private lastRowid = 0;
  /** The article id stored under `lastRowid` (the snapshot's check that its file is of this database). */
  private lastId = '';
  /** `lastRowid` when the approximate index was last saved or loaded (nothing new to save when equal). */
  private savedRowid = -1;
  /** Vectors in the index at the last save or load. */
  private savedRows = 0;
  private saving: Promise<void> | undefined;
  private saveTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private loading: Promise<void> | undefined;
  private state: SemanticIndexStatus['state'] = 'idle';
  private background = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  /** The search itself: both halves, the fusion, the filter and the page. */
  private readonly hybrid: HybridSearch;

  constructor(
    private readonly store: Pick<StorePorts, 'articles' | 'vectors'>,
    private readonly embedder: Embedder,
    private readonly options: SemanticIndexOptions = {},
  ) {
    // The next start loads a newly built graph instead of building it again.
    this.vectors = new VectorIndex({ ...options, onApproximate: () => void this.persist() });
    const ranking = {
      refresh: () => this.refresh(),
      nearest: (q: Float32Array, k: number) => this.vectors.nearest(q, k),
      has: (id: string) => this.vectors.has(id),
    };
    this.hybrid = new HybridSearch(store, cachedQueryEmbedder(embedder, options.queryCacheSize), ranking, options);
  }

  get size(): number {
    return this.vectors.size;
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  status(): SemanticIndexStatus {
    return {
      state: this.state,
      vectors: this.vectors.size,
      mode: this.vectors.mode,
      ...(this.lastError && this.state !== 'ready' ? { error: this.lastError } : {}),
    };
  }

  /**
   * Loads the archive in the background (the service calls it at start-up and does not wait): from
   * now on a search before the index is ready is refused (SearchIndexLoadingError), and a failed load
   * is retried until it succeeds. Resolves when the index is ready. Without `start()`, the first
   * search loads the index and waits for it (tests, tools).
   */
  start(): Promise<void> {
    this.background = true;
    return this.loadAll();
  }

  /**
   * Stops retrying a failed background load and background work; with `persistDir`, saves the
   * approximate index when it has vectors the saved one lacks (graceful shutdown). Never rejects.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.vectors.close();
    clearTimeout(this.retryTimer);
    clearInterval(this.saveTimer);
    await this.persist().catch(() => {});
  }

  /**
   * Saves the approximate index beside the store (no-op without `persistDir`, without an approximate
   * index, or when nothing was added since the last save). One save at a time; never mid-refresh.
   */
  persist(): Promise<void> {
    this.saving ??= this.save().finally(() => (this.saving = undefined));
    return this.saving;
  }

  private async save(): Promise<void> {
    const dir = this.options.persistDir;
    while (this.refreshing) await this.refreshing.catch(() => {});
    const approximate = this.vectors.approximate();
    if (!dir || !approximate || this.lastRowid === this.savedRowid) return;
    const started = performance.now();
    // From here to the index write, no await: the graph, the ids and lastRowid describe one moment.
    const { hnsw, ids } = approximate;
    const rowid = this.lastRowid;
    const rows = ids.length;
    const o = { ...DEFAULT_HNSW, ...this.options.hnsw };
    try {
      await writeSnapshot(snapshotPaths(dir, this.embedder.modelId), (path) => hnsw.save(path), ids.join('\n'), {
        modelId: this.embedder.modelId,
        dim: hnsw.dim,
        rows,
        lastRowid: rowid,
        lastId: this.lastId,
        hnsw: o,
      });
      this.savedRowid = rowid;
      this.savedRows = rows;
      this.options.log?.info(
        { vectors: this.vectors.size, rowid, ms: Math.round(performance.now() - started) },
        'approximate index saved',
      );
    } catch (e) {
      this.options.log?.warn(
        { err: errorText(e) },
        'saving the approximate index failed; it is rebuilt at the next start',
      );
    }
  }

  /**
   * Loads the saved approximate index when it is whole, of this model and of this database (the vector
   * under its `lastRowid` is the one it recorded); the caller then loads the newer vectors on top.
   * Returns false (logged) when there is none or it cannot be used: the caller loads from the store
   * and rebuilds the graph in the background, the exact scan serving meanwhile.
   */
  private async restore(): Promise<boolean> {
    const dir = this.options.persistDir;
    if (!dir) return false;
    const started = performance.now();
    const paths = snapshotPaths(dir, this.embedder.modelId);
    try {
      const { manifest, ids } = await readSnapshot(paths, this.embedder.modelId);
      if (manifest.rows > 0) {
        const [at] = await this.store.vectors.vectorsAfter(this.embedder.modelId, manifest.lastRowid - 1, 1);
        if (!at || at.rowid !== manifest.lastRowid || at.id !== manifest.lastId) {
          throw new SnapshotUnusable(
            `stale: the store's vector at rowid ${manifest.lastRowid} is not the saved one (another database, or replaced since)`,
          );
        }
      }
      const hnsw = await HnswIndex.load(paths.index, manifest.dim, { ...this.options.hnsw, ...manifest.hnsw });
      if (hnsw instanceof Error) throw new SnapshotUnusable(`the approximate index cannot load here (${hnsw.message})`);
      this.vectors.restore(hnsw, manifest.dim, ids);
      this.lastRowid = this.savedRowid = manifest.lastRowid;
      this.savedRows = ids.length;
      this.lastId = manifest.lastId;
      this.options.log?.info(
        { vectors: ids.length, rowid: manifest.lastRowid, ms: Math.round(performance.now() - started) },
        'saved approximate index loaded; adding newer vectors',
      );
      return true;
    } catch (e) {
      if (!(e instanceof SnapshotUnusable)) throw e;
      this.options.log?.warn(
        { err: e.message },
        'saved approximate index not used; loading from the store, approximate index rebuilt in the background',
      );
      return false;
    }
  }

  private loadAll(): Promise<void> {
    this.loading ??= this.firstLoad();
    return this.loading;
  }

  private async firstLoad(): Promise<void> {
    this.state = 'loading';
    const started = performance.now();
    let restored = false;
    for (;;) {
      try {
        if (!restored && this.lastRowid === 0) restored = await this.restore();
        await this.refresh();
        break;
      } catch (err) {
        if (!this.background || this.closed) {
          // A caller waits on this load: it sees the error (a 503 when the store is unavailable).
          this.loading = undefined;
          this.state = 'idle';
          throw err;
        }
        this.lastError = errorText(err);
        const retryMs = isStoreBusy(err) ? 200 : (this.options.retryMs ?? DEFAULT_LOAD_RETRY_MS);
        this.options.log?.warn(
          { vectors: this.vectors.size, err: this.lastError, retryMs },
          'loading the index failed; retrying',
        );
        await new Promise<void>((resolve) => {
          this.retryTimer = setTimeout(resolve, retryMs);
          this.retryTimer.unref();
        });
        if (this.closed) throw new SearchIndexLoadingError('search index closed before it was ready');
      }
    }
    // Past the threshold, the approximate index is built from here on.
    this.vectors.loaded();
    this.state = 'ready';
    this.lastError = undefined;
    const mode = this.vectors.mode === 'approximate' ? 'approximate (HNSW)' : 'exact';
    this.options.log?.info(
      { vectors: this.vectors.size, mode, ms: Math.round(performance.now() - started) },
      'index ready',
    );
    if (this.options.persistDir && this.background && !this.closed) {
      // Newer vectors are added to the graph as they come; saved now and then, and at shutdown.
      this.saveTimer = setInterval(() => {
        // A save holds the event loop while usearch writes the graph (about a second per million
        // vectors): only when enough is new that a restart would otherwise spend long adding it.
        if (this.vectors.size - this.savedRows >= Math.max(SAVE_MIN_NEW_VECTORS, this.vectors.size * 0.05))
          void this.persist();
      }, this.options.saveEveryMs ?? DEFAULT_SAVE_EVERY_MS);
      this.saveTimer.unref();
    }
  }

  /** Resolves when no approximate index is being built or saved (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.vectors.building || this.saving) await (this.vectors.building ?? this.saving);
  }

  /** Loads vectors stored since the last refresh (by this or any other process); one load at a time. */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const pageSize = Math.max(1, this.options.pageSize ?? DEFAULT_LOAD_PAGE);
    for (;;) {
      const page = await this.store.vectors.vectorsAfter(this.embedder.modelId, this.lastRowid, pageSize);
      await this.ingest(page);
      if (page.length < pageSize) return;
      // Each page is one synchronous read on SQLite: let requests in between.
      await (this.options.slice?.pause ?? yieldToEventLoop)();
    }
  }

  /** Adds the vectors of `page` stored after `lastRowid`, which moves to the last of them. */
  private async ingest(page: { rowid: number; id: string; vector: Float32Array }[]): Promise<void> {
    const fresh: typeof page = [];
    for (const v of page) {
      if (v.rowid <= this.lastRowid) continue;
      this.lastRowid = v.rowid;
      this.lastId = v.id;
      fresh.push(v);
    }
    await this.vectors.add(fresh, page.length);
  }

  /**
   * The ranked results `offset` to `offset + limit`, most relevant first (src/search/hybrid.ts); with
   * `tickers`, only those about one of the symbols, from the first `limitBounds.max` (openapi.yaml,
   * searchNews: a filtered search may return fewer).
   */
  async search(query: string, limit: number, options: SearchOptions = {}): Promise<StoredArticle[]> {
    if (this.state !== 'ready') {
      // Results from part of the archive would be a silent wrong answer: refuse until loaded.
      if (this.background)
        throw new SearchIndexLoadingError(`search index loading (${this.vectors.size} vectors so far)`);
      await this.loadAll();
    }
    return this.hybrid.search(query, limit, options);
  }
}
