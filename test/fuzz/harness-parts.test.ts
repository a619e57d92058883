/**
 * The fuzz harness's own parts, so a failure of the fuzz suite is the service's and not the harness's:
 * the raw response parser, the encodings (what the server must decode), and the contract verdicts.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  classify,
  classifyDateTime,
  describeRateCase,
  encode,
  operationById,
  operations,
  PROTOTYPE_NAMES,
  queryArb,
  renderQuery,
  showLine,
  type Encoding,
  type ParamPiece,
  type QuerySpec,
  type RateCase,
} from './arbitraries.js';
import { parseResponse } from './raw-http.js';
import { searchRankingMax } from '../../src/contract/index.js';

const buf = (s: string) => Buffer.from(s, 'latin1');

describe('raw response parser', () => {
  it('reads a Content-Length body and reports bytes after it', () => {
    const r = parseResponse(
      buf('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}'),
      false,
    );
    expect(r).toMatchObject({ status: 200, body: { a: 1 }, trailing: 0 });
    expect(r.headers['content-type']).toEqual(['application/json']);
    expect(parseResponse(buf('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK'), false).trailing).toBe(
      15,
    );
  });
  it('de-chunks a chunked body, keeps repeated headers, reads to the close without framing', () => {
    const r = parseResponse(
      buf(
        'HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\nX-A: 2\r\n\r\n3\r\n{"a\r\n4;ext=1\r\n":2}\r\n0\r\n\r\n',
      ),
      false,
    );
    expect(r).toMatchObject({ status: 400, body: { a: 2 }, trailing: 0 });
    expect(r.headers['x-a']).toEqual(['1', '2']);
    expect(parseResponse(buf('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'), false)).toMatchObject({
      status: 400,
      text: '',
    });
  });
  it('reads no body for HEAD; `either` reads one only when bytes follow', () => {
    const withBody = buf('HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\n{}');
    expect(parseResponse(withBody, true)).toMatchObject({ text: '', trailing: 2 });
    expect(parseResponse(withBody, 'either')).toMatchObject({ text: '{}', trailing: 0 });
    expect(parseResponse(buf('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n'), 'either')).toMatchObject({
      text: '',
      trailing: 0,
    });
  });
  it('refuses a truncated response instead of guessing', () => {
    expect(() => parseResponse(buf('HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}'), false)).toThrow(/shorter/);
    expect(() => parseResponse(buf('HTTP/1.1 200 OK\r\n'), false)).toThrow(/no complete response head/);
  });
});

describe('encodings: what a correct server decodes', () => {
  /** Form decoding as the contract describes it: `+` is a space, except in a date-time parameter. */
  const decode = (raw: string, plusIsLiteral: boolean) =>
    decodeURIComponent(plusIsLiteral ? raw : raw.replace(/\+/g, ' '));
  const text = fc.string({
    unit: fc.oneof(
      fc.constantFrom(..." +=&%#?/:;@!$'()*,[]~._-".split('')),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
    ),
    maxLength: 12,
  });
  it('every encoding with a defined reading decodes back to the value', () => {
    fc.assert(
      fc.property(
        text,
        fc.constantFrom<Encoding>('std', 'form', 'full', 'lower', 'minimal', 'double'),
        fc.boolean(),
        fc.boolean(),
        (s, enc, plusIsLiteral, isName) => {
          const e = encode(s, enc, { plusIsLiteral, isName, salt: 0 });
          expect(e.undefinedReading).toBe(false);
          expect(decode(e.raw, plusIsLiteral)).toBe(e.decoded);
          expect(e.raw).not.toMatch(/[&#\s]/); // never splits the query or the request line
          if (isName) expect(e.raw).not.toContain('=');
          expect(/[^\u0000-\u007f]/.test(e.raw)).toBe(false);
        },
      ),
    );
  });
  it('a broken escape or raw UTF-8 has no defined reading', () => {
    expect(encode('5', 'badPercent', { plusIsLiteral: false, isName: false, salt: 1 })).toMatchObject({
      raw: '5%z',
      decoded: undefined,
      undefinedReading: true,
    });
    expect(encode('é', 'rawUtf8', { plusIsLiteral: false, isName: false, salt: 0 }).raw).toBe('\u00c3\u00a9');
  });
});

describe('contract verdicts', () => {
  const list = operationById.get('listNews')!;
  const search = operationById.get('searchNews')!;
  const schema = (op: typeof list, name: string) => op.params.find((p) => p.name === name)!.schema;
  const piece = (name: string, value: string, valueEnc: Encoding = 'std'): ParamPiece => ({
    name,
    value,
    nameEnc: 'std',
    valueEnc,
    noEquals: false,
    salt: 0,
  });
  const q = (...pieces: ParamPiece[]): QuerySpec => ({ pieces, bareQuestionMark: false, emptyPieces: false });

  it('reads each schema keyword', () => {
    const limit = schema(list, 'limit');
    expect(classify(limit, String(limit.minimum)).label).toBe('valid');
    expect(classify(limit, String(limit.maximum + 1)).label).toBe('invalid');
    expect(classify(limit, '1e1').label).toBe('invalid');
    expect(classify(limit, '007').label).toBe('ambiguous');
    expect(classify(schema(list, 'urgency'), 'Breaking').label).toBe('invalid');
    const query = schema(search, 'q');
    expect(classify(query, 'x'.repeat(query.minLength)).label).toBe('valid');
    expect(classify(query, ' '.repeat(query.minLength)).label).toBe('invalid');
    expect(classify(query, 'x'.repeat(query.maxLength + 1)).label).toBe('invalid');
  });
  it('reads RFC 3339 strictly', () => {
    expect(classifyDateTime('2026-11-21T10:00:00Z').label).toBe('valid');
    expect(classifyDateTime('2024-02-29T10:00:00.123456789+05:30').label).toBe('valid');
    expect(classifyDateTime('2026-02-30T10:00:00Z')).toEqual({ label: 'invalid', why: 'date-time:impossible-date' });
    expect(classifyDateTime('2026-11-21T24:00:00Z').label).toBe('invalid');
    expect(classifyDateTime('2026-11-21T10:00:00+0200').label).toBe('invalid');
    expect(classifyDateTime('2026-11-21T10:00:00').label).toBe('invalid');
    expect(classifyDateTime('2026-11-20T23:59:60Z').label).toBe('ambiguous');
  });
  it('judges whole queries: unknown, repeated, missing, and encodings that change the reading', () => {
    expect(renderQuery(list, q(piece('__proto__[x]', '1'))).verdict).toEqual({
      label: 'invalid',
      why: 'unknown-parameter',
    });
    expect(renderQuery(list, q(piece('limit', '1'), piece('limit', '1'))).verdict).toEqual({
      label: 'invalid',
      why: 'repeated-parameter',
    });
    expect(renderQuery(search, q()).verdict).toEqual({ label: 'invalid', why: 'missing-required' });
    expect(renderQuery(search, q(piece('q', 'fed'))).verdict.label).toBe('valid');
    expect(renderQuery(list, q(piece('since', '2026-11-21T10:00:00+02:00', 'minimal')))).toMatchObject({
      raw: '?since=2026-11-21T10:00:00+02:00',
      verdict: { label: 'valid' },
    });
    expect(renderQuery(list, q(piece('limit', '5', 'double'))).verdict.label).toBe('valid');
    expect(renderQuery(list, q(piece('limit', '%', 'std'))).verdict.label).toBe('invalid');
    expect(renderQuery(search, q(piece('q', 'fed', 'badPercent'))).verdict.label).toBe('ambiguous');
    expect(renderQuery(list, q(piece('limit', '5', 'badPercent'))).verdict.label).toBe('invalid');
  });
});

describe('verdicts on the 1.1.0 parameters: ids, ticker lists and the rules between parameters', () => {
  const piece = (name: string, value: string): ParamPiece => ({
    name,
    value,
    nameEnc: 'std',
    valueEnc: 'std',
    noEquals: false,
    salt: 0,
  });
  const verdict = (operationId: string, pieces: [string, string][], extra: Partial<QuerySpec> = {}) =>
    renderQuery(operationById.get(operationId)!, {
      pieces: pieces.map(([n, v]) => piece(n, v)),
      bareQuestionMark: false,
      emptyPieces: false,
      ...extra,
    }).verdict;
  const list = operationById.get('listNews')!;
  const schemaOf = (name: string) => list.params.find((p) => p.name === name)!.schema;

  it('reads an id by the ArticleId pattern and length', () => {
    expect(classify(schemaOf('after'), '01M7Z87BJ3K8W3Q2ZP7R9T4V6X').label).toBe('valid');
    for (const bad of [
      '01m7z87bj3k8w3q2zp7r9t4v6x',
      '01M7Z87BJ3K8W3Q2ZP7R9T4V6',
      '81M7Z87BJ3K8W3Q2ZP7R9T4V6X',
      '01M7Z87BJ3K8W3Q2ZP7R9T4V6I',
      '',
    ]) {
      expect(classify(schemaOf('after'), bad).label).toBe('invalid');
    }
  });
  it('reads a ticker list item by item, and by its item count', () => {
    const tickers = schemaOf('tickers');
    expect(classify(tickers, 'AAPL,BRK.B,EUR/USD').label).toBe('valid');
    expect(classify(tickers, Array(tickers.maxItems).fill('A').join(',')).label).toBe('valid');
    for (const bad of [
      '',
      'AAPL,',
      'aapl',
      'AAPL,,MSFT',
      Array(tickers.maxItems + 1)
        .fill('A')
        .join(','),
      'A'.repeat(17),
    ]) {
      expect(classify(tickers, bad).label).toBe('invalid');
    }
  });
  it('makes after with before, and offset + limit past the ranking, a 400 whatever else is right', () => {
    expect(verdict('listNews', [['after', '01M7Z87BJ3K8W3Q2ZP7R9T4V6X']])).toEqual({ label: 'valid' });
    expect(
      verdict('listNews', [
        ['after', '01M7Z87BJ3K8W3Q2ZP7R9T4V6X'],
        ['before', '01M7Z87BJ3K8W3Q2ZP7R9T4V6X'],
      ]),
    ).toEqual({ label: 'invalid', why: 'cursor-conflict' });
    const searchDefault: number = operationById.get('searchNews')!.params.find((p) => p.name === 'limit')!.schema
      .default;
    const half = searchRankingMax / 2;
    expect(
      verdict('searchNews', [
        ['q', 'fed'],
        ['offset', String(searchRankingMax - searchDefault)],
      ]),
    ).toEqual({ label: 'valid' });
    expect(
      verdict('searchNews', [
        ['q', 'fed'],
        ['offset', String(searchRankingMax - searchDefault + 1)],
      ]),
    ).toEqual({ label: 'invalid', why: 'offset-past-ranking' });
    expect(
      verdict('searchNews', [
        ['q', 'fed'],
        ['offset', String(half)],
        ['limit', String(half + 1)],
      ]),
    ).toEqual({ label: 'invalid', why: 'offset-past-ranking' });
    expect(
      verdict('searchNews', [
        ['q', 'fed'],
        ['offset', String(half)],
        ['limit', String(half)],
      ]),
    ).toEqual({ label: 'valid' });
  });
});

describe('a piece that renders to nothing is no parameter (fuzz seed 1973252474)', () => {
  const usage = operationById.get('getAccountUsage')!;
  const emptyName: ParamPiece = { name: '', value: '1', nameEnc: 'std', valueEnc: 'std', noEquals: true, salt: 0 };
  it('an empty name without `=` sends no bytes, and the request has no parameter', () => {
    expect(renderQuery(usage, { pieces: [emptyName], bareQuestionMark: false, emptyPieces: false })).toMatchObject({
      raw: '',
      names: [],
      verdict: { label: 'valid' },
    });
    expect(
      renderQuery(usage, { pieces: [emptyName, emptyName], bareQuestionMark: true, emptyPieces: true }),
    ).toMatchObject({ raw: '?&&&&', names: [], verdict: { label: 'valid' } });
  });
  it('an empty name with `=` is a parameter, and an unknown one', () => {
    expect(
      renderQuery(usage, { pieces: [{ ...emptyName, noEquals: false }], bareQuestionMark: false, emptyPieces: false }),
    ).toMatchObject({ raw: '?=1', verdict: { label: 'invalid', why: 'unknown-parameter' } });
  });
});

describe('a failure report shows every step as its full request line', () => {
  it('prints method, path, raw query and version, the key role and the verdict, with empty pairs and odd bytes visible', () => {
    const q = (raw: ParamPiece[], extra: Partial<QuerySpec> = {}): QuerySpec => ({
      pieces: raw,
      bareQuestionMark: false,
      emptyPieces: false,
      ...extra,
    });
    const p = (name: string, value: string, valueEnc: Encoding = 'std'): ParamPiece => ({
      name,
      value,
      nameEnc: 'std',
      valueEnc,
      noEquals: false,
      salt: 0,
    });
    const c: RateCase = {
      keys: ['starter', 'max'],
      steps: [
        {
          key: 0,
          operationId: 'getAccountUsage',
          query: q([], { bareQuestionMark: true, emptyPieces: true }),
          advanceMs: 1,
        },
        { key: 1, operationId: 'listNews', query: q([p('limit', '5'), p('x', '\u00e9', 'rawUtf8')]), advanceMs: 0 },
      ],
    };
    expect(describeRateCase(c).split('\n')).toEqual([
      'keys starter, max; one client address per key',
      '  1. GET /v1/account/usage? HTTP/1.1   [key #0: starter, clock +1 ms; contract: parameters valid]',
      '  2. GET /v1/news?limit=5&x=\\xc3\\xa9 HTTP/1.1   [key #1: max, clock +0 ms; contract: parameters invalid (unknown-parameter)]',
    ]);
  });
  it('escapes control characters and the backslash, and writes long runs once', () => {
    expect(showLine('GET /a\u0001b\\c HTTP/1.1')).toBe('GET /a\\x01b\\\\c HTTP/1.1');
    expect(showLine(`GET /${'a'.repeat(300)} HTTP/1.1`)).toBe('GET /a{×300} HTTP/1.1');
  });
});

describe('the generators draw every Object.prototype name as a parameter name, a value, a query term and a ticker', () => {
  it('each name (and its capitals) comes up in each role within a few thousand queries', () => {
    const seen = {
      name: new Set<string>(),
      value: new Set<string>(),
      q: new Set<string>(),
      tickers: new Set<string>(),
    };
    for (const op of operations) {
      for (const q of fc.sample(queryArb(op), { numRuns: 2000, seed: 7 })) {
        for (const p of q.pieces) {
          const documented = op.params.some((d) => d.name === p.name);
          if (!documented) seen.name.add(p.name);
          else if (p.name === 'q') for (const w of p.value.split(' ')) seen.q.add(w);
          else if (p.name === 'tickers') for (const t of p.value.split(',')) seen.tickers.add(t);
          else seen.value.add(p.value);
        }
      }
    }
    for (const n of PROTOTYPE_NAMES) {
      expect(seen.name, `name ${n}`).toContain(n);
      expect(seen.value, `value ${n}`).toContain(n);
      expect(seen.q, `q ${n}`).toContain(n);
      expect(seen.tickers, `tickers ${n}`).toContain(n);
      expect(seen.tickers, `tickers ${n.toUpperCase()}`).toContain(n.toUpperCase());
    }
  });
});
