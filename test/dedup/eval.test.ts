/**
 * Near-duplicate quality on the two labelled sets of eval/ (each split by the MD5 of `a`: dev tuned on, test held
 * out): near-duplicates.jsonl (wire rewordings, template negatives) and near-duplicates-forms.jsonl (issue 18:
 * aliases, units and quarters as words or abbreviations, figures in other units, template reuse with another slot).
 *
 * Honest status (`npm run eval:enrich`, eval/README.md): both dev parts meet the issue's goals (precision >= 0.98,
 * recall >= 0.9); the held-out parts do NOT reach the precision goal: 0.935 precision / 0.847 recall on the first
 * set's test part, 0.904 / 0.930 on the second's (its second batch, fresh hard negatives, is at 0.762 alone; before
 * issue 18's changes: 0.909 / 0.882 on the first, 0.907 / 0.907 on the second's first batch). So the held-out tests
 * lock the levels measured (a regression fails CI) and name the goal they miss; raise them to GOALS when the
 * held-out parts reach it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GOALS, chosenJudge, keyRecall, parseJsonl, scorePairs, type PairCase } from '../../scripts/lib/evaluate-enrich.js';

const read = (name: string) => parseJsonl<PairCase>(readFileSync(new URL(`../../eval/${name}`, import.meta.url), 'utf8'));
const pairs = read('near-duplicates.jsonl');
const forms = read('near-duplicates-forms.jsonl');

describe('near-duplicate labelled sets', () => {
  it('the first has 750+ pairs, both kinds in both splits', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(750);
    for (const split of ['dev', 'test'] as const) {
      expect(pairs.filter((p) => p.split === split && p.duplicate).length).toBeGreaterThanOrEqual(100);
      expect(pairs.filter((p) => p.split === split && !p.duplicate).length).toBeGreaterThanOrEqual(100);
    }
  });
  it('the second has 290+ pairs, both kinds in both splits, none of them in the first', () => {
    expect(forms.length).toBeGreaterThanOrEqual(290);
    for (const split of ['dev', 'test'] as const) {
      expect(forms.filter((p) => p.split === split && p.duplicate).length).toBeGreaterThanOrEqual(40);
      expect(forms.filter((p) => p.split === split && !p.duplicate).length).toBeGreaterThanOrEqual(40);
    }
    const first = new Set(pairs.map((p) => `${p.a}\n${p.b}`));
    expect(forms.filter((p) => first.has(`${p.a}\n${p.b}`))).toEqual([]);
  });
});

describe('near-duplicate decision quality', () => {
  it('meets the goals on both dev splits', () => {
    for (const set of [pairs, forms]) {
      const dev = scorePairs(set, 'dev', chosenJudge);
      expect(dev.precision).toBeGreaterThanOrEqual(GOALS.dedupPrecision);
      expect(dev.recall).toBeGreaterThanOrEqual(GOALS.dedupRecall);
    }
  });
  it('keeps the held-out levels measured on the first set (precision below the 0.98 goal, recall below the 0.9 aim, see the header)', () => {
    const test = scorePairs(pairs, 'test', chosenJudge);
    expect(test.precision).toBeGreaterThanOrEqual(0.93);
    expect(test.recall).toBeGreaterThanOrEqual(0.84);
  });
  it('keeps the held-out levels measured on the second set (precision below the 0.98 goal, recall meets 0.9)', () => {
    const test = scorePairs(forms, 'test', chosenJudge);
    expect(test.precision).toBeGreaterThanOrEqual(0.9);
    expect(test.recall).toBeGreaterThanOrEqual(GOALS.dedupRecall);
  });
});

describe('near-duplicate candidate keys', () => {
  it('reach 0.97 of dev duplicates and 0.9 of held-out ones, on both sets', () => {
    for (const set of [pairs, forms]) {
      expect(keyRecall(set, 'dev').duplicates).toBeGreaterThanOrEqual(0.97);
      expect(keyRecall(set, 'test').duplicates).toBeGreaterThanOrEqual(0.9);
    }
  });
});
