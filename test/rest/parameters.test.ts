/**
 * The query reader of src/http/parameters.ts, rule by rule, with the contract's own numbers: one reading
 * of the query, each parameter read in the contract's style and checked against its schema, the first
 * wrong parameter named in the `400` detail.
 */
import { describe, expect, it } from 'vitest';
import { limitBounds, minRelevanceDefault, operationParameters, searchRankingMax } from '../../src/contract/index.js';
import {
  parameterProblemDetail,
  parameterReader,
  readQuery,
  unknownParameterDetail,
} from '../../src/http/parameters.js';

const list = parameterReader('listNews');
const search = parameterReader('searchNews');
const param = (op: string, name: string) => operationParameters(op).find((p) => p.name === name)!;
const invalid = (op: string, name: string) => ({
  ok: false,
  detail: parameterProblemDetail(param(op, name), 'invalid'),
});
const LIST_DEFAULT = param('listNews', 'limit').schema.default;

describe('reading the query string', () => {
  it('reads form pairs: + is a space, percent-escapes decoded, empty pairs skipped, repeats kept', () => {
    expect(readQuery('q=fed+rate%20hike&&tickers=A&tickers=B')).toEqual({ q: 'fed rate hike', tickers: ['A', 'B'] });
  });
  it('keeps + in since as the offset sign a hand-typed time carries', () => {
    expect(readQuery('since=2026-11-21T10:00:00+02:00')).toEqual({ since: '2026-11-21T10:00:00+02:00' });
  });
  it('keeps a name such as __proto__ as an own (unknown) parameter, and a malformed escape as written', () => {
    const q = readQuery('__proto__=1&bad=%E0%A4%A');
    expect(Object.keys(q)).toEqual(['__proto__', 'bad']);
    expect(q.bad).toBe('%E0%A4%A');
  });
});

describe('a malformed escape stays as written without keeping the valid escapes beside it from being decoded', () => {
  it('decodes %26 and %E2%80%94 in a value that also holds a bare % (a hand-typed "2%")', () => {
    expect(readQuery('q=S%26P+500+up+2%')).toEqual({ q: 'S&P 500 up 2%' });
    expect(readQuery('q=oil+100%+rally+%E2%80%94+gold')).toEqual({ q: 'oil 100% rally \u2014 gold' });
  });
  it('keeps escapes that are not UTF-8 as written, and decodes the valid ones around them', () => {
    expect(readQuery('q=%C3%A9t%C3%A9+%FF+50%')).toEqual({ q: '\u00e9t\u00e9 %FF 50%' });
    expect(readQuery('q=%FF%26P+50%')).toEqual({ q: '%FF&P 50%' });
    expect(readQuery('q=%C3%A9%FF%C3%A9+50%')).toEqual({ q: '\u00e9%FF\u00e9 50%' });
    expect(readQuery('q=%E2%80+%E2%80%94+50%')).toEqual({ q: '%E2%80 \u2014 50%' });
  });
});

describe('each parameter as its schema says', () => {
  it('types what it reads: integers as numbers, tickers as an array, defaults for absent parameters', () => {
    expect(list(readQuery('limit=7&tickers=EUR/USD,BRK.B&urgency=flash'))).toEqual({
      ok: true,
      params: { limit: 7, tickers: ['EUR/USD', 'BRK.B'], urgency: 'flash', min_relevance: minRelevanceDefault },
    });
    expect(list(readQuery(''))).toEqual({
      ok: true,
      params: { limit: LIST_DEFAULT, min_relevance: minRelevanceDefault },
    });
  });
  it('takes integers only in plain decimal digits, within the bounds', () => {
    for (const ok of [limitBounds.min, limitBounds.max]) expect(list(readQuery(`limit=${ok}`)).ok).toBe(true);
    for (const bad of [limitBounds.min - 1, limitBounds.max + 1, '0x10', '1e1', '+5', '5.0', ' 5', '', '9999999999']) {
      expect(list(readQuery(`limit=${bad}`)), String(bad)).toEqual(invalid('listNews', 'limit'));
    }
  });
  it('takes a date-time with an offset that names a real instant', () => {
    expect(list(readQuery('since=2026-11-21T10:00:00Z')).ok).toBe(true);
    for (const bad of ['2026-11-21T10:00:00', '2026-02-30T10:00:00Z', 'yesterday', ''])
      expect(list(readQuery(`since=${bad}`)), bad).toEqual(invalid('listNews', 'since'));
  });
  it('takes 1 to maxItems upper-case symbols, refusing an empty list', () => {
    const max = param('listNews', 'tickers').schema.maxItems as number;
    expect(list(readQuery(`tickers=${Array.from({ length: max }, (_, i) => `T${i}`).join(',')}`)).ok).toBe(true);
    for (const bad of ['', 'aapl', 'AAPL,', Array.from({ length: max + 1 }, (_, i) => `T${i}`).join(',')])
      expect(list(readQuery(`tickers=${bad}`)), bad).toEqual(invalid('listNews', 'tickers'));
  });
  it('takes enums and ids as the contract writes them', () => {
    expect(list(readQuery('urgency=urgent'))).toEqual(invalid('listNews', 'urgency'));
    expect(list(readQuery('after=not-a-ulid'))).toEqual(invalid('listNews', 'after'));
  });
  it('refuses a query of only spaces, too short or missing', () => {
    expect(search(readQuery('q=++'))).toEqual(invalid('searchNews', 'q'));
    expect(search(readQuery('q=a'))).toEqual(invalid('searchNews', 'q'));
    expect(search(readQuery('limit=5'))).toEqual({
      ok: false,
      detail: parameterProblemDetail(param('searchNews', 'q'), 'missing'),
    });
    expect(search(readQuery(`q=fed&offset=${searchRankingMax - 1}&limit=1`))).toEqual({
      ok: true,
      params: { q: 'fed', offset: searchRankingMax - 1, limit: 1, min_relevance: minRelevanceDefault },
    });
  });
});

describe('which parameter a 400 names', () => {
  it('an unknown name first, whatever else is wrong', () => {
    expect(list(readQuery('limit=0&Limit=5'))).toEqual({ ok: false, detail: unknownParameterDetail('Limit') });
    expect(list(readQuery('=x'))).toEqual({ ok: false, detail: unknownParameterDetail('') });
  });
  it('then the parameters in the contract order: repeated, missing or invalid', () => {
    expect(list(readQuery('urgency=x&limit=5&limit=6'))).toEqual({
      ok: false,
      detail: parameterProblemDetail(param('listNews', 'limit'), 'repeated'),
    });
    expect(list(readQuery('urgency=x&limit=500'))).toEqual(invalid('listNews', 'limit'));
  });
});
