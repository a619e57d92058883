/**
 * Near-duplicate quality on the three labelled sets of eval/ (each split by the MD5 of `a`: dev tuned on, test held
 * out): near-duplicates.jsonl (wire rewordings, template negatives), near-duplicates-forms.jsonl
 * (aliases, units and quarters as words or abbreviations, figures in other units, template reuse with another slot)
 * and near-duplicates-kinds.jsonl (kinds neither has, written before the rules were run on them).
 *
 * Honest status (`npm run eval:enrich`, eval/README.md): the first two dev parts meet the quality goals
 * (precision >= 0.98, recall >= 0.9), the third's does not (0.927 / 0.745: fresh kinds, three pairs left unexplained);
 * NO held-out part reaches the precision goal: 0.946 / 0.824 on the first set, 0.968 / 0.845 on the second, 0.800 /
 * 0.766 on the third. So the held-out tests lock the levels measured (a regression fails CI) and name the goal they
 * miss; raise them to GOALS when the held-out parts reach it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  GOALS,
  chosenJudge,
  keyRecall,
  parseJsonl,
  scorePairs,
  type PairCase,
} from '../../scripts/lib/evaluate-enrich.js';

const read = (name: string) =>
  parseJsonl<PairCase>(readFileSync(new URL(`../../eval/${name}`, import.meta.url), 'utf8'));
const pairs = read('near-duplicates.jsonl');
const forms = read('near-duplicates-forms.jsonl');
const kinds = read('near-duplicates-kinds.jsonl');

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

describe('near-duplicate labelled sets: the third', () => {
  it('has 270+ pairs, both kinds in both splits, none of them in the first two, split by the MD5 rule', () => {
    expect(kinds.length).toBeGreaterThanOrEqual(270);
    for (const split of ['dev', 'test'] as const) {
      expect(kinds.filter((p) => p.split === split && p.duplicate).length).toBeGreaterThanOrEqual(25);
      expect(kinds.filter((p) => p.split === split && !p.duplicate).length).toBeGreaterThanOrEqual(50);
    }
    const earlier = new Set([...pairs, ...forms].flatMap((p) => [p.a, p.b]));
    expect(kinds.filter((p) => earlier.has(p.a) || earlier.has(p.b))).toEqual([]);
    for (const p of kinds)
      expect(p.split).toBe(
        Number.parseInt(createHash('md5').update(p.a).digest('hex').slice(-1), 16) % 2 ? 'test' : 'dev',
      );
  });
});

describe('near-duplicate decision quality', () => {
  it('meets the goals on the first two dev splits', () => {
    for (const set of [pairs, forms]) {
      const dev = scorePairs(set, 'dev', chosenJudge);
      expect(dev.precision).toBeGreaterThanOrEqual(GOALS.dedupPrecision);
      expect(dev.recall).toBeGreaterThanOrEqual(GOALS.dedupRecall);
    }
  });
  it('keeps the level measured on the third dev split (below both goals, see the header)', () => {
    const dev = scorePairs(kinds, 'dev', chosenJudge);
    expect(dev.precision).toBeGreaterThanOrEqual(0.92);
    expect(dev.recall).toBeGreaterThanOrEqual(0.74);
  });
  it.each([
    // [set, name, held-out precision, held-out recall] as measured; all below the 0.98 precision goal and the 0.9
    // recall aim.
    ['near-duplicates.jsonl', 0.93, 0.82],
    ['near-duplicates-forms.jsonl', 0.96, 0.84],
    ['near-duplicates-kinds.jsonl', 0.8, 0.76],
  ] as const)(
    'keeps the held-out levels measured on %s (below the goals, see the header)',
    (name, precision, recall) => {
      const test = scorePairs(read(name), 'test', chosenJudge);
      expect(test.precision).toBeGreaterThanOrEqual(precision);
      expect(test.recall).toBeGreaterThanOrEqual(recall);
    },
  );
});

describe('near-duplicate candidate keys', () => {
  it('reach 0.97 of dev duplicates and 0.9 of held-out ones, on the first two sets', () => {
    for (const set of [pairs, forms]) {
      expect(keyRecall(set, 'dev').duplicates).toBeGreaterThanOrEqual(0.97);
      expect(keyRecall(set, 'test').duplicates).toBeGreaterThanOrEqual(0.9);
    }
  });
  it('reach 0.92 of dev duplicates and 0.93 of held-out ones on the third (levels measured)', () => {
    expect(keyRecall(kinds, 'dev').duplicates).toBeGreaterThanOrEqual(0.92);
    expect(keyRecall(kinds, 'test').duplicates).toBeGreaterThanOrEqual(0.93);
  });
});
