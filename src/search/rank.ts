/** Exact vector ranking (`cosineTopK`; `rankMatrix` in event-loop slices) and the byte format of stored vectors. */

export interface Scored {
  id: string;
  score: number;
}

/**
 * The `k` candidates most similar to `query` (unit vectors: dot = cosine), best first, ties to the greater
 * (newer) id; exact. RangeError on a bad `k` or another dimension (another model's vectors never compare).
 */
export function cosineTopK(
  query: Float32Array,
  candidates: Iterable<{ id: string; vector: Float32Array }>,
  k: number,
): Scored[] {
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
  if (k === 0) return [];
  const dim = query.length;
  // Min-heap of the best k so far: heap[0] is the worst of them.
  const heap: Scored[] = [];
  for (const { id, vector } of candidates) {
    if (vector.length !== dim) {
      throw new RangeError(`candidate ${id} has dimension ${vector.length}, query has ${dim}`);
    }
    let dot = 0;
    for (let i = 0; i < dim; i++) dot += (query[i] as number) * (vector[i] as number);
    // A corrupt vector (NaN) ranks last instead of breaking the ordering.
    const score = Number.isNaN(dot) ? -Infinity : dot;
    if (heap.length < k) {
      heap.push({ id, score });
      siftUp(heap, heap.length - 1);
    } else if (better(score, id, heap[0] as Scored)) {
      heap[0] = { id, score };
      siftDown(heap, 0);
    }
  }
  return heap.sort((a, b) => (better(a.score, a.id, b) ? -1 : better(b.score, b.id, a) ? 1 : 0));
}

/** Does (score, id) rank before `other`? Higher score first; on a tie, the greater id. */
function better(score: number, id: string, other: Scored): boolean {
  return score > other.score || (score === other.score && id > other.id);
}

function siftUp(heap: Scored[], i: number): void {
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const node = heap[i] as Scored;
    const p = heap[parent] as Scored;
    if (!better(p.score, p.id, node)) break; // parent is already the worse one
    heap[i] = p;
    heap[parent] = node;
    i = parent;
  }
}

function siftDown(heap: Scored[], i: number): void {
  for (;;) {
    const left = 2 * i + 1;
    const right = left + 1;
    let worst = i;
    const w = () => heap[worst] as Scored;
    if (left < heap.length && better(w().score, w().id, heap[left] as Scored)) worst = left;
    if (right < heap.length && better(w().score, w().id, heap[right] as Scored)) worst = right;
    if (worst === i) return;
    const tmp = heap[i] as Scored;
    heap[i] = heap[worst] as Scored;
    heap[worst] = tmp;
    i = worst;
  }
}

/** The best `k` rows so far, ordered as {@link cosineTopK}: a bounded min-heap over typed arrays. */
export class TopRows {
  private readonly rows: Int32Array;
  private readonly scores: Float64Array;
  private n = 0;

  constructor(
    readonly k: number,
    private readonly idOf: (row: number) => string,
  ) {
    if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
    this.rows = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  /** The worst score kept once full (-Infinity before): a row scoring below it cannot enter. */
  get floor(): number {
    return this.n < this.k ? -Infinity : (this.scores[0] as number);
  }

  offer(row: number, rawScore: number): void {
    if (this.k === 0) return;
    // A corrupt vector (NaN) ranks last instead of breaking the ordering.
    const score = Number.isNaN(rawScore) ? -Infinity : rawScore;
    if (this.n < this.k) {
      this.rows[this.n] = row;
      this.scores[this.n] = score;
      this.up(this.n++);
    } else if (this.before(score, row, 0)) {
      this.rows[0] = row;
      this.scores[0] = score;
      this.down(0);
    }
  }

  /** Best first. */
  result(): { row: number; score: number }[] {
    const out: { row: number; score: number }[] = [];
    for (let i = 0; i < this.n; i++) out.push({ row: this.rows[i] as number, score: this.scores[i] as number });
    return out.sort((a, b) =>
      a.score !== b.score
        ? b.score - a.score
        : this.idOf(b.row) > this.idOf(a.row)
          ? 1
          : this.idOf(b.row) < this.idOf(a.row)
            ? -1
            : 0,
    );
  }

  /** Does (score, row) rank before the entry at heap slot `i`? */
  private before(score: number, row: number, i: number): boolean {
    const other = this.scores[i] as number;
    return score > other || (score === other && this.idOf(row) > this.idOf(this.rows[i] as number));
  }

  private swap(i: number, j: number): void {
    const r = this.rows[i] as number;
    const s = this.scores[i] as number;
    this.rows[i] = this.rows[j] as number;
    this.scores[i] = this.scores[j] as number;
    this.rows[j] = r;
    this.scores[j] = s;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      // Min-heap: the parent must be the worse one.
      if (!this.before(this.scores[parent] as number, this.rows[parent] as number, i)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < this.n && this.before(this.scores[worst] as number, this.rows[worst] as number, left)) worst = left;
      if (right < this.n && this.before(this.scores[worst] as number, this.rows[worst] as number, right)) worst = right;
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }
}

/** Scores rows `from … to-1` of a row-major matrix into `top`; synchronous, the caller bounds the range. */
function scoreRows(data: Float32Array, dim: number, query: Float32Array, from: number, to: number, top: TopRows): void {
  for (let r = from; r < to; r++) {
    const o = r * dim;
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    let i = 0;
    for (; i + 3 < dim; i += 4) {
      a += (query[i] as number) * (data[o + i] as number);
      b += (query[i + 1] as number) * (data[o + i + 1] as number);
      c += (query[i + 2] as number) * (data[o + i + 2] as number);
      d += (query[i + 3] as number) * (data[o + i + 3] as number);
    }
    for (; i < dim; i++) a += (query[i] as number) * (data[o + i] as number);
    const score = a + b + c + d;
    if (score >= top.floor || Number.isNaN(score)) top.offer(r, score);
  }
}

export interface SliceOptions {
  /** Longest run of work between two yields to the event loop, in ms (default {@link DEFAULT_SLICE_MS}). */
  sliceMs?: number;
  /** Rows scored between two looks at the clock (default 256). */
  checkEvery?: number;
  /** The clock (default performance.now). */
  now?: () => number;
  /** How to yield (default: setImmediate, so timers and I/O callbacks run in between). */
  pause?: () => Promise<void>;
}

/** Ranking and index building hand the event loop back at least this often (ms). */
export const DEFAULT_SLICE_MS = 3;

export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Exact top-`k` of the first `rows` rows (as {@link cosineTopK}), in `sliceMs` slices with the event loop between. */
export async function rankMatrix(
  data: Float32Array,
  dim: number,
  rows: number,
  query: Float32Array,
  k: number,
  idOf: (row: number) => string,
  options: SliceOptions = {},
): Promise<{ row: number; score: number }[]> {
  if (query.length !== dim) throw new RangeError(`query has dimension ${query.length}, the matrix ${dim}`);
  const top = new TopRows(k, idOf);
  if (k === 0) return [];
  const now = options.now ?? (() => performance.now());
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
  const step = Math.max(1, options.checkEvery ?? 256);
  const pause = options.pause ?? yieldToEventLoop;
  let start = now();
  for (let from = 0; from < rows; from += step) {
    scoreRows(data, dim, query, from, Math.min(rows, from + step), top);
    if (from + step < rows && now() - start >= sliceMs) {
      await pause();
      start = now();
    }
  }
  return top.result();
}

// Float32Array uses the host's byte order: on little-endian hosts the stored bytes are its memory as is.
const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/** Little-endian float32 bytes of `v` (4 bytes per component), for a SQLite BLOB. A copy. */
export function vectorToBuffer(v: Float32Array): Buffer {
  if (HOST_IS_LITTLE_ENDIAN) return Buffer.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  const buf = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i] as number, i * 4);
  return buf;
}

/**
 * Reads back {@link vectorToBuffer}'s bytes into a copy (BLOBs may be unaligned); RangeError unless length % 4 === 0.
 */
export function bufferToVector(b: Buffer): Float32Array {
  if (b.length % 4 !== 0) throw new RangeError(`vector buffer length ${b.length} is not a multiple of 4`);
  const v = new Float32Array(b.length / 4);
  if (HOST_IS_LITTLE_ENDIAN) new Uint8Array(v.buffer).set(b);
  else for (let i = 0; i < v.length; i++) v[i] = b.readFloatLE(i * 4);
  return v;
}
