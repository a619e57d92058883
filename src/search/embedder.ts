/**
 * The embedding port: turns texts into L2-normalised vectors for semantic search.
 *
 * Two adapters implement it: `local.ts` (all-MiniLM-L6-v2 in WASM, offline) and `http.ts` (any
 * OpenAI-compatible `/embeddings` endpoint). Vectors from different models live in different spaces,
 * so every stored vector carries the `modelId` that made it, and a query must be embedded by the
 * same model before it is compared with them.
 */
export interface Embedder {
  /** Stable id of the model that makes the vectors, e.g. "local:all-MiniLM-L6-v2" or "openai:text-embedding-3-small". Stored with every vector; a query is always embedded with the model that built the vectors. */
  readonly modelId: string;
  /** Embeds texts; returns one L2-normalised Float32Array per text, same order. Throws EmbeddingUnavailableError on any failure (timeout, HTTP error, bad response). */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** The embedding model cannot produce vectors right now (the API answers `503`, clients retry with backoff). */
export class EmbeddingUnavailableError extends Error {
  override name = 'EmbeddingUnavailableError';
}

/**
 * Copies `values` into a new Float32Array scaled to unit L2 norm. Throws EmbeddingUnavailableError
 * when a value is not a finite number or the vector is all zeros (it has no direction to compare).
 */
export function toUnitVector(values: ArrayLike<number>): Float32Array {
  let sumSquares = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new EmbeddingUnavailableError(`embedding component ${i} is not a finite number`);
    }
    sumSquares += x * x;
  }
  const norm = Math.sqrt(sumSquares);
  if (!(norm > 0) || !Number.isFinite(norm)) {
    throw new EmbeddingUnavailableError('embedding has zero (or infinite) length and cannot be normalised');
  }
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = (values[i] as number) / norm;
  return out;
}
