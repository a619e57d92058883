/**
 * Semantic search over the archive, the public face: articles are embedded after ingestion, in
 * batches, off the path that stores and publishes them (./embedding-worker.ts: EmbeddingWorker); the
 * SemanticIndex keeps every vector of the current model in memory and ranks them
 * (./semantic-index.ts, the vectors exact or approximate in ./vector-index.ts; the search itself is
 * src/search/hybrid.ts), its approximate index saved beside the store (./persist.ts).
 */
export { DEFAULT_ANN_THRESHOLD } from './vector-index.js';
export {
  DEFAULT_LOAD_PAGE,
  DEFAULT_LOAD_RETRY_MS,
  DEFAULT_SAVE_EVERY_MS,
  SAVE_MIN_NEW_VECTORS,
  SearchIndexLoadingError,
  SemanticIndex,
} from './semantic-index.js';
export type { SemanticIndexOptions, SemanticIndexStatus } from './semantic-index.js';
export { DEFAULT_QUERY_CACHE } from '../search/query-cache.js';
export type { SearchOptions } from '../search/hybrid.js';
export { EmbeddingWorker, type WorkerOptions } from './embedding-worker.js';
