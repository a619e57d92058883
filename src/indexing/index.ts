/** Semantic search over the archive: EmbeddingWorker embeds articles after ingestion, SemanticIndex searches them. */
export { DEFAULT_ANN_THRESHOLD } from './vector-index.js';
export { SearchIndexLoadingError } from './index-loader.js';
export type { SearchOptions } from '../search/hybrid.js';
export { SemanticIndex } from './semantic-index.js';
export type { SemanticIndexOptions } from './semantic-index.js';
export { EmbeddingWorker } from './embedding-worker.js';
