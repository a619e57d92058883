import { describe, expect, it } from 'vitest';
import type { SourcedItem } from '../../src/store/ports/index.js';
import {
  chooseCandidates,
  keyHits,
  NEAR_CANDIDATES_MAX,
  NEAR_KEY_FANOUT,
  NEAR_SINGLE_KEY_CANDIDATES,
  rankNearCandidates,
} from '../../src/store/ports/sources-plan.js';
import { runSteps } from '../../src/runtime/steps.js';

const item = (source: string, nearKeys: string[]): SourcedItem => ({
  source,
  externalId: 'x',
  canonicalUrl: null,
  article: { content: 'c', urgency: 'regular', sentiment: null, tickers: [], published_at: null, source, url: null },
  nearKeys,
});
const id = (n: number) => `a${String(n).padStart(4, '0')}`;

describe('key hits: per key only the NEAR_KEY_FANOUT newest articles count', () => {
  it('keeps the newest of a crowded key and every hit of a quiet one', () => {
    const rows: [string, string, string, number][] = [];
    for (let n = 0; n < NEAR_KEY_FANOUT + 10; n++) rows.push(['hot', id(n), 's', n]);
    rows.push(['quiet', id(999), 's', 0]);
    const hits = keyHits(rows);
    expect(hits.get('hot')!.map((h) => h[0])).toEqual(
      Array.from({ length: NEAR_KEY_FANOUT }, (_, k) => id(NEAR_KEY_FANOUT + 9 - k)),
    );
    expect(hits.get('quiet')).toEqual([[id(999), 's', 0]]);
  });
});

describe('ranking: more shared keys first, then the newest; articles first stored by the same source left out', () => {
  it('orders by shared keys, then id descending, without the own source', () => {
    const hits = keyHits([
      ['k1', id(1), 'a', 1],
      ['k2', id(1), 'a', 1],
      ['k1', id(2), 'a', 2],
      ['k1', id(3), 'a', 3],
      ['k2', id(4), 'b', 4],
    ]);
    expect(rankNearCandidates(item('b', ['k1', 'k2', 'k1']), hits)).toEqual([
      { id: id(1), shared: 2 },
      { id: id(3), shared: 1 },
      { id: id(2), shared: 1 },
    ]);
  });
});

describe('choice: at most NEAR_CANDIDATES_MAX, of which NEAR_SINGLE_KEY_CANDIDATES share one key; carried articles replaced', () => {
  it('caps single-key candidates after the multi-key ones', () => {
    const list = [
      ...Array.from({ length: 3 }, (_, k) => ({ id: id(100 + k), shared: 3 })),
      ...Array.from({ length: 30 }, (_, k) => ({ id: id(k), shared: 1 })),
    ];
    const out = runSteps(chooseCandidates(new Map([[0, list]]), [[0, item('s', [])]], () => []));
    expect(out.get(0)).toEqual(list.slice(0, 3 + NEAR_SINGLE_KEY_CANDIDATES).map((c) => c.id));
  });

  it('never more than NEAR_CANDIDATES_MAX', () => {
    const list = Array.from({ length: NEAR_CANDIDATES_MAX + 5 }, (_, k) => ({ id: id(k), shared: 2 }));
    expect(runSteps(chooseCandidates(new Map([[0, list]]), [[0, item('s', [])]], () => [])).get(0)).toHaveLength(
      NEAR_CANDIDATES_MAX,
    );
  });

  it('drops an article the source carries and takes the next one, asking only about chosen pairs', () => {
    const list = Array.from({ length: NEAR_SINGLE_KEY_CANDIDATES + 2 }, (_, k) => ({ id: id(k), shared: 1 }));
    const asked: string[] = [];
    const out = runSteps(
      chooseCandidates(new Map([[0, list]]), [[0, item('s', [])]], (pairs) => {
        asked.push(...pairs.map(([a]) => a));
        return pairs.filter(([a, s]) => a === id(1) && s === 's');
      }),
    );
    expect(out.get(0)).toEqual([id(0), ...list.slice(2, NEAR_SINGLE_KEY_CANDIDATES + 1).map((c) => c.id)]);
    expect(asked).not.toContain(id(NEAR_SINGLE_KEY_CANDIDATES + 1));
  });
});
