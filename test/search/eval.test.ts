import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Bm25, parseEvalSet, recallAtK, reciprocalRankAtK, splitOf } from '../../scripts/lib/evaluate-search.js';
import { tokenize } from '../../src/store/ports/lexical-query.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/search-eval.json', import.meta.url), 'utf8')) as unknown;

describe('the labelled set test/fixtures/search-eval.json', () => {
  it('is well formed: unique ids, every query has relevant headlines that exist', () => {
    const set = parseEvalSet(fixture);
    expect(set.headlines.length).toBeGreaterThanOrEqual(60);
    expect(set.queries.length).toBeGreaterThanOrEqual(25);
  });

  it('is mostly paraphrase: most queries share no word with any of their relevant headlines', () => {
    const set = parseEvalSet(fixture);
    const text = new Map(set.headlines.map((h) => [h.id, new Set(tokenize(h.text))]));
    const disjoint = set.queries.filter((q) => {
      const words = tokenize(q.text);
      return q.relevant.every((id) => words.every((w) => !text.get(id)!.has(w)));
    });
    expect(disjoint.length / set.queries.length).toBeGreaterThan(0.5);
  });
});

const trader = JSON.parse(
  readFileSync(new URL('../fixtures/search-eval-trader.json', import.meta.url), 'utf8'),
) as unknown;

describe('the trader-style set test/fixtures/search-eval-trader.json', () => {
  const set = parseEvalSet(trader);
  it('has at least 60 questions, each with exactly one right headline', () => {
    expect(set.queries.length).toBeGreaterThanOrEqual(60);
    for (const q of set.queries) expect(q.relevant).toHaveLength(1);
  });
  it('puts every right headline among look-alikes: two other headlines of its group', () => {
    const groups = new Map<string, number>();
    for (const h of set.headlines) groups.set(h.id.slice(0, 3), (groups.get(h.id.slice(0, 3)) ?? 0) + 1);
    for (const q of set.queries) expect(groups.get(q.relevant[0]!.slice(0, 3))).toBeGreaterThanOrEqual(3);
  });
  it('covers the kinds of question a trader asks', () => {
    const kinds = new Set(set.queries.map((q) => (q as { kind?: string }).kind));
    expect([...kinds].sort()).toEqual(['company', 'figure', 'paraphrase', 'rare', 'ticker']);
  });
  it('splits dev/test by a hash of the query id, both halves used', () => {
    const dev = set.queries.filter((q) => splitOf(q.id) === 'dev').length;
    expect(dev).toBeGreaterThan(set.queries.length / 4);
    expect(set.queries.length - dev).toBeGreaterThan(set.queries.length / 4);
    // Stable: the split of an id never depends on the set.
    expect(splitOf('t01')).toBe(splitOf('t01'));
  });
});

describe('reciprocalRankAtK', () => {
  it('is 1 / the rank of the first relevant id within k, else 0', () => {
    expect(reciprocalRankAtK(['a', 'b', 'c'], ['b'], 10)).toBe(0.5);
    expect(reciprocalRankAtK(['a', 'b', 'c'], ['c', 'a'], 10)).toBe(1);
    expect(reciprocalRankAtK(['a', 'b', 'c'], ['c'], 2)).toBe(0);
  });
});

describe('parseEvalSet rejects a broken labelled set', () => {
  const h = [
    { id: 'a', text: 'x' },
    { id: 'b', text: 'y' },
  ];
  it.each<[string, unknown]>([
    ['not an object', null],
    ['a duplicate headline id', { headlines: [...h, { id: 'a', text: 'z' }], queries: [] }],
    ['a relevant id that does not exist', { headlines: h, queries: [{ id: 'q', text: 't', relevant: ['c'] }] }],
    ['a query without relevant ids', { headlines: h, queries: [{ id: 'q', text: 't', relevant: [] }] }],
    [
      'a duplicate query id',
      {
        headlines: h,
        queries: [
          { id: 'q', text: 't', relevant: ['a'] },
          { id: 'q', text: 'u', relevant: ['b'] },
        ],
      },
    ],
  ])('%s', (_name, json) => {
    expect(() => parseEvalSet(json)).toThrow(/invalid eval set/);
  });
});

describe('tokenize makes lower-case word tokens', () => {
  it('lower-cases and splits on anything that is not a letter or digit', () => {
    expect(tokenize("Brent crude surges after OPEC+ cut; S&P 500 at 5,000 — Japan's €1.8bn")).toEqual([
      'brent',
      'crude',
      'surges',
      'after',
      'opec',
      'cut',
      's',
      'p',
      '500',
      'at',
      '5',
      '000',
      'japan',
      's',
      '1',
      '8bn',
    ]);
  });
});

describe('Bm25 scores with k1 = 1.2, b = 0.75', () => {
  const bm25 = new Bm25([
    { id: 'd1', text: 'a b' },
    { id: 'd2', text: 'a c c' },
    { id: 'd3', text: 'd' },
  ]);

  it('matches scores worked out by hand', () => {
    // N = 3, avgdl = 2. "c": df 1, idf = ln(1 + 2.5/1.5); d2: tf 2, dl 3.
    expect(bm25.topK('c', 5)).toEqual([{ id: 'd2', score: expect.closeTo(1.18237, 5) }]);
    // "a": df 2, idf = ln(1 + 1.5/2.5); the shorter d1 beats d2 at equal tf.
    expect(bm25.topK('A', 5)).toEqual([
      { id: 'd1', score: expect.closeTo(0.470004, 5) },
      { id: 'd2', score: expect.closeTo(0.390192, 5) },
    ]);
  });

  it('counts a repeated query word once, and sums over distinct words', () => {
    const [one] = bm25.topK('c', 1);
    const [twice] = bm25.topK('c c', 1);
    expect(twice!.score).toBeCloseTo(one!.score, 10);
    expect(bm25.topK('a c', 1)[0]!.score).toBeCloseTo(1.18237 + 0.390192, 5);
  });

  it('ranks a rare word above a common one', () => {
    const idx = new Bm25([
      { id: '1', text: 'stocks rise' },
      { id: '2', text: 'stocks fall' },
      { id: '3', text: 'stocks flat' },
      { id: '4', text: 'cocoa rises' },
      { id: '5', text: 'cocoa stocks' },
    ]);
    expect(idx.topK('cocoa stocks', 2).map((h) => h.id)).toEqual(['5', '4']);
  });

  it('returns no document that shares no word with the query, and respects k', () => {
    expect(bm25.topK('zzz', 5)).toEqual([]);
    expect(bm25.topK('a', 1).map((h) => h.id)).toEqual(['d1']);
  });
});

describe('recallAtK is the share of relevant ids in the first k', () => {
  it('counts only the first k and divides by the number of relevant ids', () => {
    expect(recallAtK(['a', 'b', 'c'], ['c'], 2)).toBe(0);
    expect(recallAtK(['a', 'b', 'c'], ['c'], 3)).toBe(1);
    expect(recallAtK(['a', 'x'], ['a', 'b'], 5)).toBe(0.5);
    expect(recallAtK([], ['a'], 5)).toBe(0);
  });
});
