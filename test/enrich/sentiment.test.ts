import { describe, expect, it } from 'vitest';
import { enrich } from '../../src/enrich/index.js';

const label = (t: string) => enrich(t).sentiment;
const per = (t: string) => Object.fromEntries(enrich(t).tickers.map((x) => [x.ticker, x.sentiment]));

describe('article label from the finance lexicon', () => {
  it.each([
    ['Nvidia revenue beats estimates', 'positive'],
    ['Shares plunge after profit warning', 'negative'],
    ['Walmart raises full-year outlook', 'positive'],
    ['PepsiCo cuts profit outlook', 'negative'],
    ['Company holds annual meeting', 'neutral'],
  ])('%s -> %s', (text, want) => {
    expect(label(text)).toBe(want);
  });
});

describe('monetary-policy news is hawkish or dovish', () => {
  it.each([
    ['Fed raises interest rates by 25 basis points', 'hawkish'],
    ['ECB cuts rates to support growth', 'dovish'],
    ['Powell says Fed in no hurry to cut rates', 'hawkish'],
    ['Fed signals no rate cuts this year', 'hawkish'],
    ['China central bank cuts reserve requirement ratio', 'dovish'],
  ])('%s -> %s', (text, want) => {
    expect(label(text)).toBe(want);
  });
  it('needs a policy context: a company cutting prices is not dovish', () => {
    expect(label('Tesla cuts prices in China')).not.toBe('dovish');
  });
});

describe('negation and contrast', () => {
  it('a negator flips the cue after it', () => {
    expect(label('Boeing says it will not meet production target')).toBe('negative');
  });
  it('the clause after "but" weighs more', () => {
    expect(label('Apple profit rises but China sales disappoint')).toBe('negative');
  });
  it('a "despite" clause weighs less', () => {
    expect(label('Tesla shares rise despite weak deliveries')).toBe('positive');
  });
});

describe('per-ticker sentiment is scoped to the clause naming the ticker', () => {
  it('gives each side of "while" its own label', () => {
    expect(per('Apple rises while Microsoft falls')).toEqual({ AAPL: 'positive', MSFT: 'negative' });
  });
  it('a list of names shares the verb that follows', () => {
    expect(per('Apple, Microsoft lead tech rally')).toEqual({ AAPL: 'positive', MSFT: 'positive' });
  });
  it('a name with no cue is neutral', () => {
    expect(per('Microsoft to acquire gaming studio')).toEqual({ MSFT: 'neutral' });
  });
});
