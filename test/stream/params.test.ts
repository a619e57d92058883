/**
 * The stream's connection parameters beyond the key (src/stream/params.ts): `after` and `tickers`, the
 * form judged first, then the plan; every pattern and close reason from the contract.
 */
import { describe, expect, it } from 'vitest';
import { streamRules } from '../../generated/stream.js';
import { streamParams } from '../../src/stream/params.js';
import { minRelevanceDefault } from '../../src/contract/index.js';

describe('parameters: form first, then the plan', () => {
  it('reads after and tickers; equal filters share one key', () => {
    const a = streamParams(`/v1/stream?after=${'0'.repeat(26)}&tickers=MSFT,AAPL,MSFT`, true);
    const b = streamParams('/v1/stream?tickers=AAPL,MSFT', true);
    expect(a.ok && a.params.after).toBe('0'.repeat(26));
    expect(a.ok && b.ok && a.params.tickers!.key === b.params.tickers!.key).toBe(true);
  });
  it('no parameters: live, unfiltered', () => {
    expect(streamParams('/v1/stream?api_key=x', false)).toEqual({ ok: true, params: {} });
  });
  it('tickers on a plan without ticker data: tickersRequireMax; malformed: invalidParameter whatever the plan', () => {
    expect(streamParams('/v1/stream?tickers=AAPL', false)).toEqual({
      ok: false,
      close: streamRules.closeCodes.tickersRequireMax,
    });
    expect(streamParams('/v1/stream?tickers=aapl', false)).toEqual({
      ok: false,
      close: streamRules.closeCodes.invalidParameter,
    });
    expect(streamParams('/v1/stream?after=x', true)).toEqual({
      ok: false,
      close: streamRules.closeCodes.invalidParameter,
    });
  });
});

describe('min_relevance: part of the ticker filter', () => {
  const invalid = { ok: false, close: streamRules.closeCodes.invalidParameter };
  it('reads it beside tickers; without it the filter takes the contract default', () => {
    const given = streamParams('/v1/stream?tickers=AAPL&min_relevance=0.8', true);
    const absent = streamParams('/v1/stream?tickers=AAPL', true);
    expect(given.ok && given.params.tickers!.minRelevance).toBe(0.8);
    expect(absent.ok && absent.params.tickers!.minRelevance).toBe(minRelevanceDefault);
    // Filters that differ only by their minimum are different filters.
    expect(given.ok && absent.ok && given.params.tickers!.key !== absent.params.tickers!.key).toBe(true);
  });
  it('refuses it without tickers, malformed, out of range or repeated (1008 Invalid stream parameter)', () => {
    for (const q of [
      'min_relevance=0.5',
      'tickers=AAPL&min_relevance=1.5',
      'tickers=AAPL&min_relevance=-1',
      'tickers=AAPL&min_relevance=abc',
      'tickers=AAPL&min_relevance=0.5&min_relevance=0.6',
    ]) {
      expect(streamParams(`/v1/stream?${q}`, true)).toEqual(invalid);
    }
  });
  it('judges the form before the plan: a well-formed filter on a pro key is tickersRequireMax', () => {
    expect(streamParams('/v1/stream?tickers=AAPL&min_relevance=0.2', false)).toEqual({
      ok: false,
      close: streamRules.closeCodes.tickersRequireMax,
    });
  });
});
