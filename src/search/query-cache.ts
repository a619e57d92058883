/** Query vectors, the most recent kept (LRU): a repeated or paged query skips the model. */
import { LRUCache } from 'lru-cache';
import type { Embedder } from './embedder.js';

/** Recent query vectors kept (384 floats each: 1.5 KB; 512 of them under 1 MB). */
const DEFAULT_QUERY_CACHE = 512;

/** Embeds one query, or answers from the last `size` queries (0: none); errors reach the caller, nothing is kept. */
export function cachedQueryEmbedder(
  embedder: Embedder,
  size = DEFAULT_QUERY_CACHE,
): (query: string) => Promise<Float32Array> {
  const cache = size > 0 ? new LRUCache<string, Float32Array>({ max: size }) : undefined;
  return async (query) => {
    const hit = cache?.get(query);
    if (hit) return hit;
    const [q] = await embedder.embed([query]);
    cache?.set(query, q!);
    return q!;
  };
}
