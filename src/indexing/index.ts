/**
 * Semantic search over the archive, the public face: articles are embedded after ingestion, in
 * batches, off the path that stores and publishes them (./embedding-worker.ts: EmbeddingWorker); the
 * SemanticIndex keeps every vector of the current model in memory and ranks them
 * (./semantic-index.ts), its approximate index saved beside the store (./persist.ts).
 */
export {
  DEFAULT_ANN_THRESHOLD,
  DEFAULT_LOAD_PAGE,
  DEFAULT_LOAD_RETRY_MS,
  DEFAULT_QUERY_CACHE,
  DEFAULT_SAVE_EVERY_MS,
  SAVE_MIN_NEW_VECTORS,
  SearchIndexLoadingError,
  SemanticIndex,
} from './semantic-index.js';
export type { SearchOptions, SemanticIndexOptions, SemanticIndexStatus } from './semantic-index.js';
export { EmbeddingWorker, type WorkerOptions } from './embedding-worker.js';
