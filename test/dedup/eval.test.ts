/**
 * Near-duplicate quality on eval/near-duplicates.jsonl (split by the MD5 of `a`: dev tuned on, test held out).
 *
 * Honest status: the dev part meets the goals (precision >= 0.98, recall >= 0.9), the held-out test
 * part does NOT. With batch 4 (template-reuse hard negatives, eval/README.md) the rules of src/dedup measure
 * 0.909 precision and 0.882 recall on it (`npm run eval:enrich`; before the batch-4 guards: 0.822 / 0.841).
 * So this locks the held-out level reached (a regression fails CI) instead of claiming the goal; raise the
 * bounds to GOALS when the held-out part reaches them. Candidate keys: every dev duplicate shares a key.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GOALS, chosenJudge, keyRecall, parseJsonl, scorePairs, type PairCase } from '../../src/enrich/evaluate.js';

const pairs = parseJsonl<PairCase>(readFileSync(new URL('../../eval/near-duplicates.jsonl', import.meta.url), 'utf8'));

describe('near-duplicate labelled set', () => {
  it('has 750+ pairs, both kinds in both splits', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(750);
    for (const split of ['dev', 'test'] as const) {
      expect(pairs.filter((p) => p.split === split && p.duplicate).length).toBeGreaterThanOrEqual(100);
      expect(pairs.filter((p) => p.split === split && !p.duplicate).length).toBeGreaterThanOrEqual(100);
    }
  });
});

describe('near-duplicate decision quality', () => {
  it('meets the goals on the dev split', () => {
    const dev = scorePairs(pairs, 'dev', chosenJudge);
    expect(dev.precision).toBeGreaterThanOrEqual(GOALS.dedupPrecision);
    expect(dev.recall).toBeGreaterThanOrEqual(GOALS.dedupRecall);
  });
  it('keeps the held-out level reached (below the goals, see the header)', () => {
    const test = scorePairs(pairs, 'test', chosenJudge);
    expect(test.precision).toBeGreaterThanOrEqual(0.9);
    expect(test.recall).toBeGreaterThanOrEqual(0.88);
  });
});

describe('near-duplicate candidate keys', () => {
  it('reach 0.97 of dev duplicates and 0.9 of held-out ones', () => {
    expect(keyRecall(pairs, 'dev').duplicates).toBeGreaterThanOrEqual(0.97);
    expect(keyRecall(pairs, 'test').duplicates).toBeGreaterThanOrEqual(0.9);
  });
});
