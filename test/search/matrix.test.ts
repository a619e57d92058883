import { describe, expect, it } from 'vitest';
import { VectorMatrix } from '../../src/search/matrix.js';
import { cosineTopK, rankMatrix, TopRows } from '../../src/search/rank.js';
import { idOf, randomUnitVectors } from './corpus.js';

describe('VectorMatrix keeps every vector in one contiguous Float32Array', () => {
  it('appends rows in order, overwrites one in place, and reads them back exactly', () => {
    const m = new VectorMatrix(3);
    expect(m.append(Float32Array.from([1, 2, 3]))).toBe(0);
    expect(m.append(Float32Array.from([4, 5, 6]))).toBe(1);
    m.set(0, Float32Array.from([7, 8, 9]));
    expect(Array.from(m.row(0))).toEqual([7, 8, 9]);
    expect(Array.from(m.row(1))).toEqual([4, 5, 6]);
    expect(m.rows).toBe(2);
    expect(Array.from(m.data.subarray(0, 6))).toEqual([7, 8, 9, 4, 5, 6]);
  });

  it('grows by a small factor and trim() drops the slack down to the rows in use plus the headroom asked', () => {
    const m = new VectorMatrix(4);
    for (let i = 0; i < 1000; i++) m.append(new Float32Array(4).fill(i));
    expect(m.capacity).toBeGreaterThanOrEqual(1000);
    expect(m.capacity).toBeLessThanOrEqual(Math.ceil(1000 * VectorMatrix.GROWTH));
    m.trim(10);
    expect(m.capacity).toBe(1010);
    expect(m.byteLength).toBe(1010 * 4 * 4);
    expect(Array.from(m.row(999))).toEqual([999, 999, 999, 999]);
  });

  it('refuses a vector of another dimension and a row that does not exist', () => {
    const m = new VectorMatrix(2);
    expect(() => m.append(Float32Array.from([1, 2, 3]))).toThrow(RangeError);
    expect(() => m.set(0, Float32Array.from([1, 2]))).toThrow(RangeError);
  });
});

describe('rankMatrix ranks a matrix exactly, as cosineTopK does over loose vectors', () => {
  const dim = 16;
  const n = 3000;
  const data = randomUnitVectors(n, dim, 1);
  const loose = Array.from({ length: n }, (_, r) => ({ id: idOf(r), vector: data.subarray(r * dim, (r + 1) * dim) }));

  it('gives the same top-k, in the same order, for several queries and k', async () => {
    const queries = randomUnitVectors(5, dim, 2);
    for (let q = 0; q < 5; q++) {
      const query = queries.subarray(q * dim, (q + 1) * dim);
      for (const k of [1, 10, 100]) {
        const got = await rankMatrix(data, dim, n, query, k, idOf);
        const want = cosineTopK(query, loose, k);
        expect(got.map((g) => idOf(g.row))).toEqual(want.map((w) => w.id));
      }
    }
  });

  it('orders equal scores newer id first and ranks a corrupt (NaN) row last', async () => {
    const d = new Float32Array([1, 0, 1, 0, NaN, 0, 1, 0]);
    const got = await rankMatrix(d, 2, 4, Float32Array.from([1, 0]), 4, idOf);
    expect(got.map((g) => g.row)).toEqual([3, 1, 0, 2]);
  });

  it('ranks only the rows asked for, and refuses a query of another dimension', async () => {
    expect(
      (await rankMatrix(data, dim, 5, data.subarray(0, dim), 10, idOf)).map((g) => g.row).sort((a, b) => a - b),
    ).toEqual([0, 1, 2, 3, 4]);
    await expect(rankMatrix(data, dim, n, new Float32Array(dim + 1), 3, idOf)).rejects.toThrow(RangeError);
    expect(await rankMatrix(data, dim, n, data.subarray(0, dim), 0, idOf)).toEqual([]);
  });

  it('TopRows keeps the best k whatever the arrival order', () => {
    const top = new TopRows(3, idOf);
    for (const [row, score] of [
      [0, 0.1],
      [1, 0.9],
      [2, 0.5],
      [3, 0.95],
      [4, 0.2],
      [5, 0.5],
    ] as const)
      top.offer(row, score);
    expect(top.result().map((r) => r.row)).toEqual([3, 1, 5]);
  });
});

describe('a large exact ranking hands the event loop back between slices', () => {
  it('a timer set before the ranking fires before the ranking finishes', async () => {
    const dim = 384;
    const n = 20_000;
    const data = randomUnitVectors(n, dim, 3);
    // An injected clock that moves one slice per look: every look ends the slice (no timing in the test).
    let t = 0;
    let pauses = 0;
    let fired = false;
    setTimeout(() => (fired = true), 0);
    const firedAtEnd = await rankMatrix(data, dim, n, data.subarray(0, dim), 10, idOf, {
      now: () => (t += 10),
      sliceMs: 5,
      pause: () => new Promise<void>((r) => setTimeout(() => (pauses++, r()), 0)),
    }).then((top) => {
      expect(top[0]!.row).toBe(0);
      return fired;
    });
    expect(firedAtEnd).toBe(true);
    expect(pauses).toBeGreaterThan(10);
  });

  it('with the default pause (setImmediate), I/O and timers run between slices', async () => {
    const dim = 384;
    const n = 20_000;
    const data = randomUnitVectors(n, dim, 4);
    let t = 0;
    let fired = false;
    setImmediate(() => (fired = true));
    const top = await rankMatrix(data, dim, n, data.subarray(dim, 2 * dim), 5, idOf, {
      now: () => (t += 10),
      sliceMs: 5,
    });
    expect(fired).toBe(true);
    expect(top[0]!.row).toBe(1);
  });
});
