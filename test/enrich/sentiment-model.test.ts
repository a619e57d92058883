/**
 * The learned sentiment (src/enrich/learned.ts over the committed model): the classes the lexicon alone
 * misread, each stated on lines that are not in the corpus. `npm run eval:enrich` measures the model on
 * the held-out split; these lock the behaviours.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { enrich } from '../../src/enrich/index.js';
import { corpusHash } from '../../scripts/lib/sentiment-corpus.js';

const label = (t: string) => enrich(t).sentiment;
const per = (t: string) => Object.fromEntries(enrich(t).tickers.map((x) => [x.ticker, x.sentiment]));

describe('the committed model is the one the corpus gives', () => {
  it('names the hash of eval/sentiment/ as it is (npm run train:sentiment -- --check retrains and compares)', () => {
    const model = JSON.parse(
      readFileSync(new URL('../../src/enrich/resources/sentiment-model.json', import.meta.url), 'utf8'),
    ) as { corpus: string };
    expect(model.corpus).toBe(corpusHash());
  });
});

describe('direction × quantity: whether a move is good depends on what moves', () => {
  it.each([
    ['The operating loss narrowed to EUR 3.1 mn from EUR 5.6 mn.', 'positive'],
    ['Net sales decreased by 6% to EUR 88.2 mn.', 'negative'],
    ['Earnings per share were EUR 0.52 (EUR 0.41).', 'positive'],
    ['The group reduced its net debt by a third during the year.', 'positive'],
  ])('%s -> %s', (text, want) => {
    expect(label(text)).toBe(want);
  });
});

describe('policy stance comes from decisions and from conditions, with or without a bank named', () => {
  it.each([
    ['The Committee decided to raise the target range for the federal funds rate by a quarter point.', 'hawkish'],
    ['Inflation remains well above the 2 percent target.', 'hawkish'],
    ['The Governing Council lowered the deposit facility rate by 25 basis points.', 'dovish'],
  ])('%s -> %s', (text, want) => {
    expect(label(text)).toBe(want);
  });
  it('a company missing its own target is not a stance', () => {
    expect(['positive', 'negative', 'neutral']).toContain(
      label('Boeing says it will not meet its delivery target this year'),
    );
  });
});

describe("per-ticker sentiment is the company's own, not the line's", () => {
  it('lines with opposite fates label each side', () => {
    expect(per('Nike gains market share as Adidas sales slump')).toEqual({ NKE: 'positive', 'ADS.DE': 'negative' });
    expect(per('Microsoft wins Pentagon cloud contract after Amazon loses appeal')).toEqual({
      MSFT: 'positive',
      AMZN: 'negative',
    });
  });
  it('the broker of a rating is neutral, the rated company takes the rating', () => {
    expect(per('Citigroup upgrades AbbVie to buy')).toEqual({ C: 'neutral', ABBV: 'positive' });
  });
});
