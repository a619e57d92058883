/**
 * The held-out (test) parts of the labelled sets in eval/ keep their measured quality, so a regression
 * fails CI. A test asserts its quality goal where it is met; for near-duplicates both held-out parts are below the 0.98
 * precision goal (0.940, 0.968 and 0.800 on the three sets, see `npm run eval:enrich` and eval/README.md), so this
 * locks the levels
 * reached instead of claiming the goal (test/dedup/eval.test.ts holds the details).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  GOALS,
  chosenJudge,
  parseJsonl,
  scoreLabels,
  scorePairs,
  scoreTickers,
  type PairCase,
  type SentimentCase,
  type TickerCase,
} from '../../scripts/lib/evaluate-enrich.js';

const read = <T>(name: string) => parseJsonl<T>(readFileSync(new URL(`../../eval/${name}`, import.meta.url), 'utf8'));

describe('labelled sets: held-out quality', () => {
  it('tickers: precision and recall goals on the test split', () => {
    const r = scoreTickers(read<TickerCase>('tickers.jsonl'), 'test');
    expect(r.precision).toBeGreaterThanOrEqual(GOALS.tickerPrecision);
    expect(r.recall).toBeGreaterThanOrEqual(GOALS.tickerRecall);
  });
  it('per-ticker sentiment and the article label beat the majority class by 20 points on the test split', () => {
    const t = scoreTickers(read<TickerCase>('tickers.jsonl'), 'test');
    expect(t.sentimentAccuracy).toBeGreaterThanOrEqual(t.sentimentBaseline + 0.2);
    const l = scoreLabels(read<SentimentCase>('sentiment.jsonl'), 'test');
    expect(l.accuracy).toBeGreaterThanOrEqual(l.baseline + 0.2);
  });
  it('near-duplicates: the dev goals on the first two sets, and the held-out levels reached (precision below the 0.98 goal on all three)', () => {
    // [set, dev goals met, held-out precision, held-out recall] as measured; the goal is GOALS.dedupPrecision /
    // dedupRecall.
    const measured: [string, boolean, number, number][] = [
      ['near-duplicates.jsonl', true, 0.93, 0.82],
      ['near-duplicates-forms.jsonl', true, 0.96, 0.84],
      ['near-duplicates-kinds.jsonl', false, 0.8, 0.76],
    ];
    for (const [name, devGoals, precision, recall] of measured) {
      const pairs = read<PairCase>(name);
      const dev = scorePairs(pairs, 'dev', chosenJudge);
      if (devGoals) {
        expect(dev.precision).toBeGreaterThanOrEqual(GOALS.dedupPrecision);
        expect(dev.recall).toBeGreaterThanOrEqual(GOALS.dedupRecall);
      }
      const test = scorePairs(pairs, 'test', chosenJudge);
      expect(test.precision).toBeGreaterThanOrEqual(precision);
      expect(test.recall).toBeGreaterThanOrEqual(recall);
    }
  });
});
