/**
 * Search over the archive: every vector of the current model in memory, kept up to date, searched hybrid
 * (src/search/hybrid.ts).
 */
import type { Embedder } from '../search/index.js';
import { HybridSearch, type HybridOptions, type SearchOptions } from '../search/hybrid.js';
import { cachedQueryEmbedder } from '../search/query-cache.js';
import type { StoredArticle } from '../domain/articles.js';
import type { StorePorts } from '../store/ports/index.js';
import { IndexLoader, type IndexLoaderOptions, type LoadState } from './index-loader.js';
import { SavedIndex, type SavedIndexOptions } from './saved-index.js';
import { VectorFeed, type VectorFeedOptions } from './vector-feed.js';
import { VectorIndex, type VectorIndexOptions } from './vector-index.js';

export interface SemanticIndexOptions
  extends
    HybridOptions,
    Omit<VectorIndexOptions, 'onApproximate'>,
    SavedIndexOptions,
    IndexLoaderOptions,
    Pick<VectorFeedOptions, 'pageSize'> {
  /** Query vectors kept for repeated queries (default DEFAULT_QUERY_CACHE; 0: none). */
  queryCacheSize?: number;
}

export interface SemanticIndexStatus {
  state: LoadState;
  vectors: number;
  mode: 'exact' | 'approximate';
  /** Why the last background load attempt failed (it is retried). */
  error?: string;
}

export class SemanticIndex {
  private readonly vectors: VectorIndex;
  private readonly feed: VectorFeed;
  private readonly saved: SavedIndex;
  private readonly loader: IndexLoader;
  private readonly hybrid: HybridSearch;

  constructor(store: Pick<StorePorts, 'articles' | 'vectors'>, embedder: Embedder, options: SemanticIndexOptions = {}) {
    // The next start loads a newly built graph instead of building it again.
    this.vectors = new VectorIndex({ ...options, onApproximate: () => void this.saved.save() });
    this.feed = new VectorFeed(store.vectors, embedder.modelId, this.vectors, { pageSize: options.pageSize });
    this.saved = new SavedIndex(store.vectors, embedder.modelId, this.vectors, this.feed, options);
    this.loader = new IndexLoader(this.vectors, this.feed, this.saved, options);
    const ranking = {
      refresh: () => this.feed.refresh(),
      nearest: (q: Float32Array, k: number) => this.vectors.nearest(q, k),
      has: (id: string) => this.vectors.has(id),
    };
    this.hybrid = new HybridSearch(store, cachedQueryEmbedder(embedder, options.queryCacheSize), ranking, options);
  }

  get size(): number {
    return this.vectors.size;
  }

  get ready(): boolean {
    return this.loader.ready;
  }

  status(): SemanticIndexStatus {
    const { state, error } = this.loader.status();
    return { state, vectors: this.vectors.size, mode: this.vectors.mode, ...(error ? { error } : {}) };
  }

  /**
   * Loads in the background, retrying failures; search is refused (503) until ready. Without it, the first search loads
   * and waits.
   */
  start(): Promise<void> {
    return this.loader.start();
  }

  /** Stops background work and saves the approximate index if it has new vectors (graceful shutdown). Never rejects. */
  close(): Promise<void> {
    return this.loader.close();
  }

  /** Saves the approximate index if there is one with new vectors; one save at a time, never mid-refresh. */
  persist(): Promise<void> {
    return this.saved.save();
  }

  /** Resolves when no approximate index is being built or saved (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.vectors.building || this.saved.pending) await (this.vectors.building ?? this.saved.pending);
  }

  /** Loads vectors stored since the last refresh (by this or any other process); one load at a time. */
  refresh(): Promise<void> {
    return this.feed.refresh();
  }

  /**
   * Results `offset` to `offset + limit`, most relevant first; with `tickers`, from the first `limitBounds.max`
   * only (openapi.yaml searchNews: a filtered search may return fewer). Refused while a background load runs.
   */
  async search(query: string, limit: number, options: SearchOptions = {}): Promise<StoredArticle[]> {
    if (!this.loader.ready) await this.loader.untilReady();
    return this.hybrid.search(query, limit, options);
  }
}
