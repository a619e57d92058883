/** Embedder for an OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama's /v1, LiteLLM, TEI…): `POST {url}`. */
import { EmbeddingUnavailableError, toUnitVector, type Embedder } from './embedder.js';

export interface HttpEmbedderOptions {
  /** The full endpoint, e.g. "https://api.openai.com/v1/embeddings". */
  url: string;
  /** Model name sent in the request body, e.g. "text-embedding-3-small". */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string;
  /** Bound on each request, from sending to the last byte of the body. Default 5000. */
  timeoutMs?: number;
  /** Texts per request; larger calls are split into sequential requests. Default 256. */
  maxBatchSize?: number;
  /** The fetch to use (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch;
}

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_BATCH_SIZE = 256;

export function createHttpEmbedder(options: HttpEmbedderOptions): Embedder {
  const { url, model, apiKey } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBatchSize = options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (!url) throw new TypeError('createHttpEmbedder: url is required');
  if (!model) throw new TypeError('createHttpEmbedder: model is required');
  if (!(timeoutMs > 0)) throw new RangeError(`createHttpEmbedder: timeoutMs must be > 0, got ${timeoutMs}`);
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) {
    throw new RangeError(`createHttpEmbedder: maxBatchSize must be a positive integer, got ${maxBatchSize}`);
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;

  async function request(input: string[]): Promise<Float32Array[]> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await fetchImpl(url, { method: 'POST', headers, body: JSON.stringify({ model, input }), signal });
      if (!res.ok) {
        const detail = (await res.text()).slice(0, 200);
        throw new EmbeddingUnavailableError(`embeddings endpoint answered HTTP ${res.status}: ${detail}`);
      }
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new EmbeddingUnavailableError(`embeddings endpoint sent a body that is not JSON: ${text.slice(0, 100)}`);
      }
      return parseEmbeddings(body, input.length);
    } catch (err) {
      if (err instanceof EmbeddingUnavailableError) throw err;
      if (signal.aborted) {
        throw new EmbeddingUnavailableError(`embeddings request timed out after ${timeoutMs} ms`, { cause: err });
      }
      throw new EmbeddingUnavailableError(`embeddings request failed: ${String(err)}`, { cause: err });
    }
  }

  return {
    modelId: `openai-compatible:${model}`,
    async embed(texts: string[]): Promise<Float32Array[]> {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += maxBatchSize) {
        out.push(...(await request(texts.slice(i, i + maxBatchSize))));
      }
      const dim = out[0]?.length;
      if (out.some((v) => v.length !== dim)) {
        throw new EmbeddingUnavailableError('embeddings endpoint returned vectors of different dimensions');
      }
      return out;
    },
  };
}

/** `{data: [{embedding: number[], index}]}` → vectors in input order, normalised; anything else throws. */
function parseEmbeddings(body: unknown, expected: number): Float32Array[] {
  const bad = (why: string) => new EmbeddingUnavailableError(`embeddings endpoint sent a malformed response: ${why}`);
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { data?: unknown }).data)) {
    throw bad('no `data` array');
  }
  const data = (body as { data: unknown[] }).data;
  if (data.length !== expected) throw bad(`${data.length} embeddings for ${expected} inputs`);
  const out: (Float32Array | undefined)[] = new Array(expected).fill(undefined);
  for (const item of data) {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
      throw bad(`index ${String(index)} out of range`);
    }
    if (out[index] !== undefined) throw bad(`index ${index} repeated`);
    if (!Array.isArray(embedding) || embedding.length === 0) throw bad(`embedding ${index} is not a non-empty array`);
    out[index] = toUnitVector(embedding);
  }
  const vectors = out as Float32Array[]; // every index 0..expected-1 seen exactly once
  if (vectors.some((v) => v.length !== vectors[0]?.length)) throw bad('embeddings of different dimensions');
  return vectors;
}
