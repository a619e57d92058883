/**
 * Semantic search over the archive, the public face: articles are embedded after ingestion, in
 * batches, off the path that stores and publishes them (./embedding-worker.ts: EmbeddingWorker); the
 * SemanticIndex (./semantic-index.ts) keeps every vector of the current model in memory
 * (./vector-index.ts), loads it from the store (./vector-feed.ts, ./index-loader.ts) and searches it
 * with src/search/hybrid.ts, its approximate index saved beside the store (./saved-index.ts, ./persist.ts).
 */
export { DEFAULT_ANN_THRESHOLD } from './vector-index.js';
export { DEFAULT_LOAD_PAGE } from './vector-feed.js';
export { DEFAULT_LOAD_RETRY_MS, SearchIndexLoadingError } from './index-loader.js';
export { DEFAULT_SAVE_EVERY_MS, SAVE_MIN_NEW_VECTORS } from './saved-index.js';
export { DEFAULT_QUERY_CACHE } from '../search/query-cache.js';
export type { SearchOptions } from '../search/hybrid.js';
export { SemanticIndex } from './semantic-index.js';
export type { SemanticIndexOptions, SemanticIndexStatus } from './semantic-index.js';
export { EmbeddingWorker, type WorkerOptions } from './embedding-worker.js';
