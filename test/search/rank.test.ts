import { describe, expect, it } from 'vitest';
import { bufferToVector, cosineTopK, vectorToBuffer } from '../../src/search/rank.js';

const v = (...xs: number[]) => Float32Array.from(xs);
const unit = (...xs: number[]) => {
  const n = Math.hypot(...xs);
  return Float32Array.from(xs.map((x) => x / n));
};

describe('cosineTopK ranks candidates by dot product, best first', () => {
  it('orders by descending similarity to the query', () => {
    const q = unit(1, 0, 0);
    const hits = cosineTopK(
      q,
      [
        { id: 'a', vector: unit(0, 1, 0) },
        { id: 'b', vector: unit(1, 1, 0) },
        { id: 'c', vector: unit(1, 0, 0) },
        { id: 'd', vector: unit(-1, 0, 0) },
      ],
      4,
    );
    expect(hits.map((h) => h.id)).toEqual(['c', 'b', 'a', 'd']);
    expect(hits[0]!.score).toBeCloseTo(1, 6);
    expect(hits[1]!.score).toBeCloseTo(Math.SQRT1_2, 6);
    expect(hits[3]!.score).toBeCloseTo(-1, 6);
  });

  it('keeps only the k best', () => {
    const q = unit(1, 0);
    const hits = cosineTopK(
      q,
      [0, 1, 2, 3, 4, 5].map((i) => ({ id: `x${i}`, vector: unit(1, i) })),
      2,
    );
    expect(hits.map((h) => h.id)).toEqual(['x0', 'x1']);
  });

  it('agrees with a full sort on random data, for every k', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
    // Rounded components make many exact ties, to exercise the tie rule inside the heap.
    const candidates = Array.from({ length: 300 }, (_, i) => ({
      id: `id${String(i).padStart(3, '0')}`,
      vector: v(Math.round(rand() * 3) / 3, Math.round(rand() * 3) / 3, Math.round(rand() * 3) / 3),
    }));
    const q = v(0.5, -0.25, 1);
    const dot = (a: Float32Array) => a[0]! * q[0]! + a[1]! * q[1]! + a[2]! * q[2]!;
    const expected = candidates
      .map((c) => ({ id: c.id, score: dot(c.vector) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : -1));
    for (const k of [1, 2, 5, 17, 100, 299, 300]) {
      const hits = cosineTopK(q, candidates, k);
      expect(hits.map((h) => h.id)).toEqual(expected.slice(0, k).map((e) => e.id));
      hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 6));
    }
  });

  it('accepts any iterable, such as a generator over database rows', () => {
    function* rows() {
      yield { id: 'a', vector: unit(0, 1) };
      yield { id: 'b', vector: unit(1, 0) };
    }
    expect(cosineTopK(unit(1, 0), rows(), 1).map((h) => h.id)).toEqual(['b']);
  });
});

describe('cosineTopK breaks ties by id descending (the newer ULID first)', () => {
  it('puts the greater id first among equal scores, whatever the input order', () => {
    const q = unit(1, 0);
    const same = unit(1, 1);
    const ids = ['01HZX0000000000000000000AA', '01HZX0000000000000000000AC', '01HZX0000000000000000000AB'];
    for (const order of [ids, [...ids].reverse()]) {
      const hits = cosineTopK(
        q,
        order.map((id) => ({ id, vector: same })),
        3,
      );
      expect(hits.map((h) => h.id)).toEqual([
        '01HZX0000000000000000000AC',
        '01HZX0000000000000000000AB',
        '01HZX0000000000000000000AA',
      ]);
    }
  });

  it('keeps the newer of two equal candidates when only one fits in k', () => {
    const q = unit(1, 0);
    expect(
      cosineTopK(
        q,
        [
          { id: '01B', vector: unit(1, 0) },
          { id: '01A', vector: unit(1, 0) },
        ],
        1,
      )[0]!.id,
    ).toBe('01B');
    expect(
      cosineTopK(
        q,
        [
          { id: '01A', vector: unit(1, 0) },
          { id: '01B', vector: unit(1, 0) },
        ],
        1,
      )[0]!.id,
    ).toBe('01B');
  });
});

describe('cosineTopK with k out of the ordinary', () => {
  it('returns every candidate, sorted, when k is bigger than their number', () => {
    const hits = cosineTopK(
      unit(1, 0),
      [
        { id: 'a', vector: unit(0, 1) },
        { id: 'b', vector: unit(1, 0) },
      ],
      10,
    );
    expect(hits.map((h) => h.id)).toEqual(['b', 'a']);
  });

  it('returns nothing for k = 0 or no candidates', () => {
    expect(cosineTopK(unit(1, 0), [{ id: 'a', vector: unit(1, 0) }], 0)).toEqual([]);
    expect(cosineTopK(unit(1, 0), [], 5)).toEqual([]);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('rejects k = %s', (k) => {
    expect(() => cosineTopK(unit(1, 0), [], k)).toThrow(RangeError);
  });
});

describe('cosineTopK refuses vectors it cannot compare', () => {
  it('throws when a candidate has another dimension than the query (another model)', () => {
    expect(() => cosineTopK(unit(1, 0), [{ id: 'a', vector: unit(1, 0, 0) }], 1)).toThrow(/dimension 3/);
  });

  it('ranks a corrupt (NaN) vector last instead of breaking the order', () => {
    const hits = cosineTopK(
      unit(1, 0),
      [
        { id: 'z', vector: v(Number.NaN, 0) },
        { id: 'a', vector: unit(-1, 0) },
        { id: 'b', vector: unit(1, 0) },
      ],
      3,
    );
    expect(hits.map((h) => h.id)).toEqual(['b', 'a', 'z']);
  });
});

describe('vectorToBuffer / bufferToVector store little-endian float32', () => {
  it('round-trips every value bit for bit', () => {
    const x = v(1, -0.5, 3.4028234663852886e38, 1.401298464324817e-45, -0, 0.1, Math.PI);
    const back = bufferToVector(vectorToBuffer(x));
    expect(back).toBeInstanceOf(Float32Array);
    expect(Array.from(back)).toEqual(Array.from(x));
    expect(Object.is(back[4], -0)).toBe(true);
  });

  it('writes 4 little-endian bytes per component', () => {
    const buf = vectorToBuffer(v(1, -2));
    expect(buf.length).toBe(8);
    expect([...buf]).toEqual([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]);
  });

  it('reads a buffer at an unaligned byte offset (as a BLOB may be)', () => {
    const x = v(0.25, -7, 42);
    const backing = Buffer.alloc(1 + 12);
    vectorToBuffer(x).copy(backing, 1);
    const odd = backing.subarray(1);
    expect(odd.byteOffset % 4).not.toBe(0);
    expect(Array.from(bufferToVector(odd))).toEqual([0.25, -7, 42]);
  });

  it('copies: changing the buffer or the vector afterwards does not change the other', () => {
    const x = v(1, 2);
    const buf = vectorToBuffer(x);
    x[0] = 9;
    expect(bufferToVector(buf)[0]).toBe(1);
    const back = bufferToVector(buf);
    buf.fill(0);
    expect(Array.from(back)).toEqual([1, 2]);
  });

  it('converts a subarray view, not its whole backing buffer', () => {
    const whole = v(1, 2, 3, 4);
    expect(Array.from(bufferToVector(vectorToBuffer(whole.subarray(1, 3))))).toEqual([2, 3]);
  });

  it('rejects a buffer whose length is not a multiple of 4', () => {
    expect(() => bufferToVector(Buffer.alloc(7))).toThrow(RangeError);
  });
});
