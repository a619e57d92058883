/**
 * The held-out (test) parts of the labelled sets in eval/ keep their measured quality, so a regression
 * fails CI. Goals from the issue where met; for near-duplicates the held-out part is below the 0.98/0.9
 * goal (see `npm run eval:enrich`), so this locks the level reached instead of claiming the goal.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GOALS, chosenJudge, parseJsonl, scoreLabels, scorePairs, scoreTickers, type PairCase, type SentimentCase, type TickerCase } from '../../src/enrich/evaluate.js';

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
  it('near-duplicates: the dev goal and the held-out level reached', () => {
    const pairs = read<PairCase>('near-duplicates.jsonl');
    const dev = scorePairs(pairs, 'dev', chosenJudge);
    expect(dev.precision).toBeGreaterThanOrEqual(GOALS.dedupPrecision);
    expect(dev.recall).toBeGreaterThanOrEqual(GOALS.dedupRecall);
    const test = scorePairs(pairs, 'test', chosenJudge);
    expect(test.precision).toBeGreaterThanOrEqual(0.85);
    expect(test.recall).toBeGreaterThanOrEqual(0.8);
  });
});
