/** HNSW index for large archives (usearch, N-API prebuilds): float32 vectors by row, inner product; slice-wise adds. */
import { DEFAULT_SLICE_MS, yieldToEventLoop, type SliceOptions } from './rank.js';

export interface HnswOptions {
  /** Neighbours per node (HNSW `M`). Default {@link DEFAULT_HNSW.connectivity}. */
  connectivity?: number;
  /** Candidate list while inserting (`efConstruction`). */
  expansionAdd?: number;
  /** Candidate list while searching (`ef`): higher, better recall, slower. */
  expansionSearch?: number;
}

/** Chosen by measured recall@10 on clustered 384-d vectors: M 32 gained little for twice the graph. */
export const DEFAULT_HNSW: Required<HnswOptions> = { connectivity: 16, expansionAdd: 128, expansionSearch: 256 };

interface UsearchIndex {
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  search(vector: Float32Array, k: number, threads?: number): { keys: BigUint64Array; distances: Float32Array };
  remove(keys: bigint | BigUint64Array): unknown;
  size(): number;
  save(path: string): void;
  load(path: string): void;
}
interface UsearchModule {
  Index: new (config: Record<string, unknown>) => UsearchIndex;
}

let engine: Promise<UsearchModule | Error> | undefined;

/** The usearch module, loaded once on first use; an Error when it cannot load (no binary for this platform). */
function loadHnswEngine(): Promise<UsearchModule | Error> {
  engine ??= import('usearch').then(
    (m) => (m as unknown as { default?: UsearchModule }).default ?? (m as unknown as UsearchModule),
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
  return engine;
}

export class HnswIndex {
  private constructor(
    private readonly index: UsearchIndex,
    readonly dim: number,
  ) {}

  /** A new empty index, or an Error when usearch cannot load here. */
  static async create(dim: number, options: HnswOptions = {}): Promise<HnswIndex | Error> {
    const mod = await loadHnswEngine();
    if (mod instanceof Error) return mod;
    return new HnswIndex(HnswIndex.make(mod, dim, options), dim);
  }

  /** Reads a {@link save}d index, synchronously. usearch trusts the bytes (a cut file aborts): verify first. */
  static async load(path: string, dim: number, options: HnswOptions = {}): Promise<HnswIndex | Error> {
    const mod = await loadHnswEngine();
    if (mod instanceof Error) return mod;
    const index = HnswIndex.make(mod, dim, options);
    index.load(path);
    return new HnswIndex(index, dim);
  }

  /** Writes the graph and its vectors to `path` (synchronous). */
  save(path: string): void {
    this.index.save(path);
  }

  private static make(mod: UsearchModule, dim: number, options: HnswOptions): UsearchIndex {
    const o = { ...DEFAULT_HNSW, ...options };
    return new mod.Index({
      metric: 'ip',
      dimensions: dim,
      connectivity: o.connectivity,
      quantization: 'f32',
      expansion_add: o.expansionAdd,
      expansion_search: o.expansionSearch,
      multi: false,
    });
  }

  get size(): number {
    return this.index.size();
  }

  /** Adds new rows from `first` in batches of about `sliceMs`, yielding between them; {@link set} replaces a row. */
  async addRows(
    first: number,
    vectors: Float32Array,
    options: SliceOptions & { threads?: number } = {},
  ): Promise<void> {
    const count = vectors.length / this.dim;
    const now = options.now ?? (() => performance.now());
    const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    const pause = options.pause ?? yieldToEventLoop;
    const threads = Math.max(1, options.threads ?? 1);
    let batch = threads;
    for (let i = 0; i < count;) {
      const n = Math.min(batch, count - i);
      const keys = new BigUint64Array(n);
      for (let j = 0; j < n; j++) keys[j] = BigInt(first + i + j);
      const t0 = now();
      this.index.add(keys, vectors.subarray(i * this.dim, (i + n) * this.dim), threads);
      const took = now() - t0;
      i += n;
      // Next batch: as many insertions as fit in a slice at the rate just seen (at least one per thread).
      batch = Math.max(threads, Math.min(1024, Math.floor((n * sliceMs) / Math.max(took, 0.01))));
      if (i < count) await pause();
    }
  }

  /** Replaces (or adds) one row now. */
  set(row: number, vector: Float32Array): void {
    const key = BigInt(row);
    this.index.remove(key);
    this.index.add(new BigUint64Array([key]), vector, 1);
  }

  /** Up to `k` rows most similar to `query` (score = inner product), best first. Synchronous. */
  search(query: Float32Array, k: number): { row: number; score: number }[] {
    if (k <= 0 || this.size === 0) return [];
    const { keys, distances } = this.index.search(query, k, 1);
    const out: { row: number; score: number }[] = [];
    // usearch's inner-product distance is 1 - dot.
    for (let i = 0; i < keys.length; i++) out.push({ row: Number(keys[i]), score: 1 - (distances[i] as number) });
    return out;
  }
}
