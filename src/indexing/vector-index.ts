/**
 * Every vector of the current model in memory, one row per article (a vector stored again replaces its row).
 * Up to `annThreshold` a float32 matrix ranked exactly; past it, after the first load, an HNSW graph built in the
 * background while the exact scan answers. Where usearch cannot load, the index stays exact.
 */
import { errorText, type Log } from '../domain/log.js';
import { HnswIndex } from '../search/ann.js';
import { VectorMatrix } from '../search/matrix.js';
import { rankMatrix, type Scored } from '../search/rank.js';

/**
 * Past this many vectors HNSW answers; up to it the exact scan meets the latency goal
 * (docs/decisions/ann-threshold.md).
 */
export const DEFAULT_ANN_THRESHOLD = 20_000;

export interface VectorIndexOptions {
  /** Past this many vectors, the approximate index answers (default {@link DEFAULT_ANN_THRESHOLD}). */
  annThreshold?: number;
  /** Threads inserting into the HNSW graph, each batch (default 1: the other core stays free). */
  buildThreads?: number;
  log?: Log;
  /** Called once the approximate index has taken over from the matrix (the loader saves it then). */
  onApproximate?: () => void;
}

/** One vector read from the store. */
export interface StoredVector {
  id: string;
  vector: Float32Array;
}

/** The graph being built from the matrix, and the rows replaced in the matrix meanwhile. */
interface Build {
  done: Promise<void>;
  replaced: Set<number>;
}

export class VectorIndex {
  /** row → article id. */
  private readonly ids: string[] = [];
  /** article id → row. */
  private readonly positions = new Map<string, number>();
  /** Set by the first vector; a vector of another dimension is never compared. */
  private dim: number | undefined;
  /** The exact storage, until the approximate index takes over. */
  private matrix: VectorMatrix | undefined;
  /** The approximate storage, once it holds every row. */
  private hnsw: HnswIndex | undefined;
  private build: Build | undefined;
  /** No approximate index here (usearch did not load, or a build failed): exact whatever the size. */
  private annUnavailable = false;
  /** Set by {@link loaded}: from then on, growth past the threshold starts a build. */
  private complete = false;
  private closed = false;
  private skipped = 0;

  constructor(private readonly options: VectorIndexOptions = {}) {}

  private get annThreshold(): number {
    return this.options.annThreshold ?? DEFAULT_ANN_THRESHOLD;
  }

  /** How rows go into the HNSW graph: in slices of the event loop, on `buildThreads` threads. */
  private get buildOptions() {
    return { threads: this.options.buildThreads ?? 1 };
  }

  get size(): number {
    return this.ids.length;
  }

  get mode(): 'exact' | 'approximate' {
    return this.hnsw ? 'approximate' : 'exact';
  }

  /** Whether the article has a vector here (searchable). */
  has(id: string): boolean {
    return this.positions.has(id);
  }

  /** Resolves when no approximate index is being built. */
  get building(): Promise<void> | undefined {
    return this.build?.done;
  }

  /** Adds `vectors` in store order; a known article's row is replaced, another dimension skipped (logged once). */
  async add(vectors: readonly StoredVector[], capacityHint: number): Promise<void> {
    const fresh: Float32Array[] = [];
    const firstFresh = this.ids.length;
    for (const v of vectors) {
      this.dim ??= v.vector.length;
      if (v.vector.length !== this.dim) {
        if (this.skipped++ === 0)
          this.options.log?.warn(
            { article: v.id, dimension: v.vector.length, index: this.dim },
            'vector of another dimension skipped',
          );
        continue;
      }
      const at = this.positions.get(v.id);
      if (at !== undefined) {
        this.replace(at, v.vector);
        continue;
      }
      this.positions.set(v.id, this.ids.length);
      this.ids.push(v.id);
      // Once approximate, new rows go into the graph together after the loop; until then, into the matrix.
      if (this.hnsw) fresh.push(v.vector);
      else (this.matrix ??= new VectorMatrix(this.dim, Math.min(capacityHint, this.annThreshold + 1))).append(v.vector);
    }
    if (this.hnsw && fresh.length > 0) {
      const block = new Float32Array(fresh.length * this.dim!);
      fresh.forEach((v, i) => block.set(v, i * this.dim!));
      await this.hnsw.addRows(firstFresh, block, this.buildOptions);
    }
    if (this.complete) this.maybeBuildApproximate();
  }

  private replace(row: number, vector: Float32Array): void {
    if (this.hnsw) this.hnsw.set(row, vector);
    else {
      this.matrix!.set(row, vector);
      // The graph being built may already hold the old vector: it is set again at the switch.
      this.build?.replaced.add(row);
    }
  }

  /**
   * The whole archive is in: the matrix keeps headroom for 1/16 more rows (at least 256); past the threshold, HNSW is
   * built.
   */
  loaded(): void {
    this.matrix?.trim(Math.max(256, this.matrix.rows >> 4));
    this.complete = true;
    this.maybeBuildApproximate();
  }

  /** Starts no further build, and stops one under way at its next step. */
  close(): void {
    this.closed = true;
  }

  /** The `k` articles most similar to `query`, best first (equal scores: the newer article first). */
  async nearest(query: Float32Array, k: number): Promise<Scored[]> {
    if (this.dim === undefined || this.ids.length === 0) return [];
    if (query.length !== this.dim) throw new RangeError(`query has dimension ${query.length}, the index ${this.dim}`);
    const idOf = (row: number) => this.ids[row]!;
    const scored = ({ row, score }: { row: number; score: number }) => ({ id: idOf(row), score });
    if (this.hnsw) {
      return this.hnsw
        .search(query, k)
        .sort((a, b) => b.score - a.score || (idOf(b.row) > idOf(a.row) ? 1 : idOf(b.row) < idOf(a.row) ? -1 : 0))
        .map(scored);
    }
    const m = this.matrix!;
    return (await rankMatrix(m.data, m.dim, m.rows, query, k, idOf)).map(scored);
  }

  /** The approximate index and the row → id list at this moment (what a save writes); undefined while exact. */
  approximate(): { hnsw: HnswIndex; ids: readonly string[] } | undefined {
    return this.hnsw && { hnsw: this.hnsw, ids: this.ids };
  }

  /** Starts from a saved approximate index (an empty index only): `ids` are its rows in order. */
  restore(hnsw: HnswIndex, ids: readonly string[]): void {
    this.hnsw = hnsw;
    this.dim = hnsw.dim;
    ids.forEach((id, row) => {
      this.ids.push(id);
      this.positions.set(id, row);
    });
  }

  /** Past the threshold, builds the HNSW graph in the background; the exact scan answers until it has caught up. */
  private maybeBuildApproximate(): void {
    if (this.hnsw || this.build || this.annUnavailable || this.closed || !this.matrix) return;
    if (this.matrix.rows <= this.annThreshold) return;
    const replaced = new Set<number>();
    this.build = {
      replaced,
      done: this.toApproximate(replaced)
        .catch((e: unknown) => {
          this.annUnavailable = true;
          this.options.log?.warn({ err: errorText(e) }, 'building the approximate index failed; ranking exactly');
        })
        .finally(() => (this.build = undefined)),
    };
  }

  /** Builds the HNSW graph from the matrix (searches stay exact meanwhile), then drops the matrix. */
  private async toApproximate(replaced: Set<number>): Promise<void> {
    const started = performance.now();
    const dim = this.matrix!.dim;
    const hnsw = await HnswIndex.create(dim);
    if (hnsw instanceof Error) {
      this.annUnavailable = true;
      this.options.log?.warn(
        { err: hnsw.message, vectors: this.matrix!.rows },
        'the approximate index cannot load here; ranking exactly',
      );
      return;
    }
    replaced.clear();
    // Rows appended while a part was being added (new articles) are added in the next round.
    for (let done = 0; done < this.matrix!.rows;) {
      if (this.closed) return;
      const rows = this.matrix!.rows;
      await hnsw.addRows(done, this.matrix!.data.subarray(done * dim, rows * dim), this.buildOptions);
      done = rows;
    }
    // No await from here to the switch: nothing can change the matrix in between.
    for (const row of replaced) hnsw.set(row, this.matrix!.row(row));
    replaced.clear();
    const rows = this.matrix!.rows;
    this.hnsw = hnsw;
    this.matrix = undefined;
    this.options.log?.info(
      { vectors: rows, ms: Math.round(performance.now() - started) },
      'switched to the approximate index (HNSW)',
    );
    this.options.onApproximate?.();
  }
}
