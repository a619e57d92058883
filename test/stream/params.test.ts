/**
 * The stream's connection parameters beyond the key (src/stream/params.ts): `after` and `tickers`, the
 * form judged first, then the plan; every pattern and close reason from the contract.
 */
import { describe, expect, it } from 'vitest';
import { streamRules } from '../../generated/stream.js';
import { streamParams } from '../../src/stream/params.js';

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
    expect(streamParams('/v1/stream?tickers=AAPL', false)).toEqual({ ok: false, close: streamRules.closeCodes.tickersRequireMax });
    expect(streamParams('/v1/stream?tickers=aapl', false)).toEqual({ ok: false, close: streamRules.closeCodes.invalidParameter });
    expect(streamParams('/v1/stream?after=x', true)).toEqual({ ok: false, close: streamRules.closeCodes.invalidParameter });
  });
});
