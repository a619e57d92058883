/** The embedding port. Vector spaces differ by model, so a query is embedded by the stored vectors' `modelId`. */
export interface Embedder {
  /** Stable id of the model (e.g. "local:all-MiniLM-L6-v2"), stored with every vector it makes. */
  readonly modelId: string;
  /** One L2-normalised vector per text, in order; EmbeddingUnavailableError on any failure. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** The embedding model cannot produce vectors right now (the API answers `503`, clients retry with backoff). */
export class EmbeddingUnavailableError extends Error {
  override name = 'EmbeddingUnavailableError';
}

/** `values` scaled to unit L2 norm (a copy); EmbeddingUnavailableError for a non-finite value or a zero vector. */
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
