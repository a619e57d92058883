/** Every vector of the index in one row-major Float32Array: 4 bytes per component, no per-vector object. */
export class VectorMatrix {
  private buf: Float32Array;
  private count = 0;

  /** Growth factor when the matrix is full: small, so the slack stays small (see {@link trim}). */
  static readonly GROWTH = 1.5;

  constructor(
    readonly dim: number,
    initialRows = 0,
  ) {
    if (!Number.isInteger(dim) || dim <= 0) throw new RangeError(`dim must be a positive integer, got ${dim}`);
    this.buf = new Float32Array(Math.max(0, initialRows) * dim);
  }

  get rows(): number {
    return this.count;
  }

  /** Rows allocated. */
  get capacity(): number {
    return this.buf.length / this.dim;
  }

  /** Bytes held by the matrix (allocated, not only used). */
  get byteLength(): number {
    return this.buf.byteLength;
  }

  /** Rows `0 … rows-1` are valid; growth allocates anew, so a reader holding it across an await keeps its rows. */
  get data(): Float32Array {
    return this.buf;
  }

  /** Appends `v` as a new row; returns its row number. Throws RangeError on another dimension. */
  append(v: Float32Array): number {
    this.check(v);
    if (this.count === this.capacity) this.grow(Math.max(16, Math.ceil(this.count * VectorMatrix.GROWTH)));
    this.buf.set(v, this.count * this.dim);
    return this.count++;
  }

  /** Overwrites row `row` (an existing one) with `v`. */
  set(row: number, v: Float32Array): void {
    this.check(v);
    if (!Number.isInteger(row) || row < 0 || row >= this.count)
      throw new RangeError(`row ${row} out of range 0..${this.count - 1}`);
    this.buf.set(v, row * this.dim);
  }

  /** Row `row` as a view (no copy). */
  row(row: number): Float32Array {
    return this.buf.subarray(row * this.dim, (row + 1) * this.dim);
  }

  /** Reallocates to the rows in use plus `headroom` rows (after a bulk load, to drop the growth slack). */
  trim(headroom = 0): void {
    const rows = this.count + Math.max(0, Math.floor(headroom));
    if (rows !== this.capacity) this.grow(rows);
  }

  private grow(rows: number): void {
    const next = new Float32Array(rows * this.dim);
    next.set(this.buf.subarray(0, this.count * this.dim));
    this.buf = next;
  }

  private check(v: Float32Array): void {
    if (v.length !== this.dim) throw new RangeError(`vector has dimension ${v.length}, the matrix ${this.dim}`);
  }
}
