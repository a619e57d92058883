/**
 * Exact (brute-force) vector ranking and the byte format of stored vectors. Pure functions.
 */

export interface Scored {
  id: string;
  score: number;
}

/**
 * The `k` candidates most similar to `query`, best first. Vectors are L2-normalised, so similarity is
 * the dot product (= cosine). Equal scores are ordered by id descending: ids are ULIDs, so the newer
 * article comes first. Fewer than `k` results when there are fewer candidates. Exact: every
 * candidate is scored, in O(n·d) time and O(k) memory.
 *
 * Throws RangeError when `k` is not a non-negative integer or a candidate's dimension differs from
 * the query's (vectors of another model must never be compared).
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

// Float32Array uses the host's byte order; on little-endian hosts (x86, ARM as run by Node) the
// stored bytes are its memory as is, and a copy is a memcpy.
const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/** Little-endian float32 bytes of `v` (4 bytes per component), for a SQLite BLOB. A copy. */
export function vectorToBuffer(v: Float32Array): Buffer {
  if (HOST_IS_LITTLE_ENDIAN) return Buffer.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  const buf = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i] as number, i * 4);
  return buf;
}

/**
 * The vector stored by {@link vectorToBuffer}. Copies the bytes, so the result does not alias the
 * buffer and works whatever the buffer's byte offset (SQLite BLOBs need not be 4-byte aligned).
 * Throws RangeError when the length is not a multiple of 4.
 */
export function bufferToVector(b: Buffer): Float32Array {
  if (b.length % 4 !== 0) throw new RangeError(`vector buffer length ${b.length} is not a multiple of 4`);
  const v = new Float32Array(b.length / 4);
  if (HOST_IS_LITTLE_ENDIAN) new Uint8Array(v.buffer).set(b);
  else for (let i = 0; i < v.length; i++) v[i] = b.readFloatLE(i * 4);
  return v;
}
