/**
 * Seeded vector corpora for the index tests and `npm run bench:search`: the same seed gives the same
 * vectors on every machine. `random` draws unit vectors uniformly on the sphere (the hardest case for an
 * approximate index: every point is nearly as far as any other); `clustered` scatters them around a
 * few hundred topics, closer to what a text embedding model produces.
 */
import type { VectorStore } from '../../src/store/ports/index.js';

export { prng } from '../../scripts/lib/random.js';
import { prng } from '../../scripts/lib/random.js';

/** Standard normal draws (Box–Muller). */
function gaussian(rand: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    const u = Math.max(rand(), 1e-12);
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

function normalizeRows(m: Float32Array, dim: number): Float32Array {
  for (let o = 0; o < m.length; o += dim) {
    let s = 0;
    for (let i = 0; i < dim; i++) s += m[o + i]! * m[o + i]!;
    const inv = 1 / Math.sqrt(s || 1);
    for (let i = 0; i < dim; i++) m[o + i]! *= inv;
  }
  return m;
}

/** `n` unit vectors uniform on the sphere, row-major. */
export function randomUnitVectors(n: number, dim: number, seed: number): Float32Array {
  const g = gaussian(prng(seed));
  const m = new Float32Array(n * dim);
  for (let i = 0; i < m.length; i++) m[i] = g();
  return normalizeRows(m, dim);
}

/**
 * `n` unit vectors around `topics` random centres (noise `spread` per component relative to the
 * centre's). The centres come from `centreSeed` (default `seed`): two calls with the same centreSeed
 * draw from the same topics (a corpus and fresh queries).
 */
export function clusteredUnitVectors(
  n: number,
  dim: number,
  seed: number,
  topics = 200,
  spread = 0.6,
  centreSeed = seed,
): Float32Array {
  const rand = prng(seed);
  const g = gaussian(rand);
  const centres = randomUnitVectors(topics, dim, centreSeed ^ 0x9e3779b9);
  const scale = spread / Math.sqrt(dim);
  const m = new Float32Array(n * dim);
  for (let r = 0; r < n; r++) {
    const c = Math.floor(rand() * topics) * dim;
    for (let i = 0; i < dim; i++) m[r * dim + i] = centres[c + i]! + g() * scale;
  }
  return normalizeRows(m, dim);
}

/** Article ids in ULID order (lexicographic = insertion order), as the store makes them. */
export function idOf(i: number): string {
  return `01K${i.toString(32).toUpperCase().padStart(23, '0')}`;
}

/**
 * A VectorStore (and the `getMany` the index calls) over a row-major matrix, for loading an index
 * without a database. `failFirst` makes the first calls throw, like a database not yet reachable;
 * `gate` holds every page until it resolves.
 */
export class MatrixVectorStore {
  calls = 0;
  failFirst = 0;
  gate: Promise<void> | undefined;
  constructor(
    readonly model: string,
    private readonly data: Float32Array,
    private readonly dim: number,
  ) {}

  /** Rows the store holds so far (default all of `data`): raise it to "store" newer vectors. */
  visible = Infinity;

  get count(): number {
    return Math.min(this.visible, this.data.length / this.dim);
  }

  async vectorsAfter(
    model: string,
    afterRowid: number,
    limit?: number,
  ): Promise<{ rowid: number; id: string; vector: Float32Array }[]> {
    this.calls++;
    if (this.failFirst > 0) {
      this.failFirst--;
      throw Object.assign(new Error('database unreachable (test)'), { unavailable: true });
    }
    await this.gate;
    if (model !== this.model) return [];
    const end = Math.min(this.count, afterRowid + (limit ?? this.count));
    const out = [];
    for (let r = afterRowid; r < end; r++)
      out.push({ rowid: r + 1, id: idOf(r), vector: this.data.subarray(r * this.dim, (r + 1) * this.dim) });
    return out;
  }

  /** No article text here: the lexical half finds nothing, the ranking is the vectors'. */
  async lexicalSearch(): Promise<{ id: string; score: number }[]> {
    return [];
  }

  async getMany(ids: string[]): Promise<{ id: string }[]> {
    return ids.map((id) => ({ id }));
  }
}

/** The index's ports, for a MatrixVectorStore (the articles' getMany, the vectors' vectorsAfter and lexicalSearch). */
export function asIndexStore(
  s: MatrixVectorStore,
): ConstructorParameters<typeof import('../../src/indexing/index.js').SemanticIndex>[0] {
  return { articles: s, vectors: s } as unknown as ConstructorParameters<
    typeof import('../../src/indexing/index.js').SemanticIndex
  >[0];
}

export type { VectorStore };
