/** Semantic search: the embedding port, its two adapters (local, HTTP), and exact vector ranking. */
import type { Embedder } from './embedder.js';
import { createHttpEmbedder } from './http.js';
import { createLocalEmbedder } from './local.js';

export { EmbeddingUnavailableError, type Embedder } from './embedder.js';
export { cosineTopK, vectorToBuffer, bufferToVector, type Scored } from './rank.js';
export { createHttpEmbedder, type HttpEmbedderOptions } from './http.js';
export {
  createLocalEmbedder,
  LOCAL_DIMENSIONS,
  LOCAL_MODEL_ID,
  type LocalEmbedder,
  type LocalEmbedderOptions,
} from './local.js';

export interface EmbedderConfig {
  /** OpenAI-compatible embeddings endpoint; when unset (or empty), the local model is used. */
  embeddingsUrl?: string;
  /** Required with embeddingsUrl. */
  embeddingsModel?: string;
  embeddingsApiKey?: string;
  /** Per-request bound for the HTTP provider (default 5000 ms); the local model has no timeout. */
  timeoutMs?: number;
}

/** An embedder that can release its resources (the local model's worker threads) at shutdown. */
export interface ClosableEmbedder extends Embedder {
  close(): Promise<void>;
}

/** The HTTP provider when `embeddingsUrl` is set, otherwise the local all-MiniLM-L6-v2 model. */
export function createEmbedder(cfg: EmbedderConfig): ClosableEmbedder {
  if (cfg.embeddingsUrl) {
    if (!cfg.embeddingsModel) throw new TypeError('embeddingsModel is required when embeddingsUrl is set');
    const http = createHttpEmbedder({
      url: cfg.embeddingsUrl,
      model: cfg.embeddingsModel,
      ...(cfg.embeddingsApiKey ? { apiKey: cfg.embeddingsApiKey } : {}),
      ...(cfg.timeoutMs !== undefined ? { timeoutMs: cfg.timeoutMs } : {}),
    });
    return { modelId: http.modelId, embed: (texts) => http.embed(texts), close: async () => {} };
  }
  return createLocalEmbedder();
}
