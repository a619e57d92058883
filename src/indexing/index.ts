/**
 * Semantic search over the archive, the public face: articles are embedded after ingestion, in
 * batches, off the path that stores and publishes them (./embedding-worker.ts: EmbeddingWorker); the
 * SemanticIndex (./semantic-index.ts) keeps every vector of the current model in memory
 * (./vector-index.ts), loads it from the store (./vector-feed.ts, ./index-loader.ts) and searches it
 * with src/search/hybrid.ts, its approximate index saved beside the store (./saved-index.ts, ./persist.ts).
 */
export { DEFAULT_ANN_THRESHOLD } from './vector-index.js';
export { SearchIndexLoadingError } from './index-loader.js';
export type { SearchOptions } from '../search/hybrid.js';
export { SemanticIndex } from './semantic-index.js';
export type { SemanticIndexOptions } from './semantic-index.js';
export { EmbeddingWorker } from './embedding-worker.js';
