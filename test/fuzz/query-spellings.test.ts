/**
 * The fuzzer's contract oracle and the service must read a query string the same way (the
 * rule: openapi.yaml, "Validation": `application/x-www-form-urlencoded` as the WHATWG URL standard). The
 * oracle counted a piece that rendered to nothing (an empty name without `=`) as an unknown parameter,
 * so `GET /v1/account/usage` with no query at all was "a 400" to it. Each row below is one way of
 * spelling a query, with the answer the contract gives it; the same row is checked on the oracle
 * (`queryVerdict`, what the fuzz suite predicts) and on the service over a real socket, so the two
 * cannot drift apart again without this failing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problems } from '../../src/contract/index.js';
import { operationById, queryVerdict, readQuery } from './arbitraries.js';
import { header, rawRequest } from './raw-http.js';
import { startTestService, type TestService } from '../support/service.js';

const UNKNOWN = (name: string) => `${name} is not a parameter of this operation`;
const EMPTY_NAME = 'A parameter with an empty name is not a parameter of this operation';

type Row = [
  operationId: string,
  query: string,
  expected: { status: 200 } | { status: 400; detail: string; why: string },
];
const ok = { status: 200 } as const;
const bad = (detail: string, why = 'unknown-parameter') => ({ status: 400 as const, detail, why });

/** `query` is everything after the path, `?` included, exactly as sent. */
const rows: Row[] = [
  // Empty pairs: no parameter at all.
  ['getAccountUsage', '', ok],
  ['getAccountUsage', '?', ok],
  ['getAccountUsage', '?&', ok],
  ['getAccountUsage', '?&&', ok],
  ['getAccountUsage', '?&&&&', ok],
  ['listNews', '?limit=5&', ok],
  ['listNews', '?&limit=5', ok],
  ['listNews', '?&&limit=5&&', ok],
  // A pair with an empty name is a parameter, and not one of the operation's.
  ['getAccountUsage', '?=', bad(EMPTY_NAME)],
  ['getAccountUsage', '?=1', bad(EMPTY_NAME)],
  ['getAccountUsage', '?&=&', bad(EMPTY_NAME)],
  ['listNews', '?limit=5&=', bad(EMPTY_NAME)],
  ['listNews', '?limit=5&=5', bad(EMPTY_NAME)],
  // A name without `=`, after empty pairs or not.
  ['getAccountUsage', '?a', bad(UNKNOWN('a'))],
  ['getAccountUsage', '?&&a', bad(UNKNOWN('a'))],
  ['getAccountUsage', '?a=', bad(UNKNOWN('a'))],
  ['getAccountUsage', '?a&', bad(UNKNOWN('a'))],
  // Repeated `?`: only the first starts the query; a later one is part of a name.
  ['getAccountUsage', '??', bad(UNKNOWN('?'))],
  ['getAccountUsage', '??a=1', bad(UNKNOWN('?a'))],
  ['listNews', '??limit=5', bad(UNKNOWN('?limit'))],
  ['listNews', '?limit=5?', bad('limit must be an integer between 1 and 100', 'integer:not-plain-digits')],
  // Percent-encoded names are read decoded: `%6Cimit` is `limit`.
  ['listNews', '?%6Cimit=5', ok],
  ['listNews', '?%6c%69%6d%69%74=5', ok],
  ['listNews', '?limit=5&%6Cimit=6', bad('limit must be given once', 'repeated-parameter')],
  ['getAccountUsage', '?%61=1', bad(UNKNOWN('a'))],
  ['getAccountUsage', '?%26=1', bad(UNKNOWN('&'))],
  ['getAccountUsage', '?%3D=1', bad(UNKNOWN('='))],
  ['getAccountUsage', '?%3F', bad(UNKNOWN('?'))],
  ['listNews', '?%20limit=5', bad(UNKNOWN(' limit'))],
  // `+` is a space in a name (and in values other than a date-time).
  ['getAccountUsage', '?+', bad(UNKNOWN(' '))],
  ['getAccountUsage', '?+=1', bad(UNKNOWN(' '))],
  ['listNews', '?limit+=5', bad(UNKNOWN('limit '))],
  ['getAccountUsage', '?a+b=1', bad(UNKNOWN('a b'))],
  ['listNews', '?since=2026-11-21T10:00:00+02:00', ok],
  ['listNews', '?urgency=breaking+', bad('urgency must be one of breaking, flash, regular', 'enum:not-a-member')],
  // Names are case-sensitive.
  ['listNews', '?LIMIT=5', bad(UNKNOWN('LIMIT'))],
  ['listNews', '?Limit=5', bad(UNKNOWN('Limit'))],
  ['listNews', '?limit=5&Limit=5', bad(UNKNOWN('Limit'))],
  ['searchNews', '?q=fed&Q=fed', bad(UNKNOWN('Q'))],
  ['searchNews', '?&q=fed&', ok],
  // Other characters that other parsers treat specially are just part of a name.
  ['getAccountUsage', '?a;b=1', bad(UNKNOWN('a;b'))],
  ['listNews', '?limit[]=5', bad(UNKNOWN('limit[]'))],
  ['getAccountUsage', '?__proto__=1', bad(UNKNOWN('__proto__'))],
  // A broken escape in a name: no defined reading, and not a parameter of the operation either way.
  ['getAccountUsage', '?%=1', bad(UNKNOWN('%'), 'name:broken-escape')],
  ['getAccountUsage', '?%zz', bad(UNKNOWN('%zz'), 'name:broken-escape')],
];

let svc: TestService;
let ipSeq = 0;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.close());

describe('a query string is read the same way by the service and by the fuzzer oracle, spelling by spelling', () => {
  it.each(rows)('%s%s', async (operationId, query, expected) => {
    const op = operationById.get(operationId)!;
    const qs = query.startsWith('?') ? query.slice(1) : query;

    // The oracle.
    const verdict = queryVerdict(op, qs);
    if (expected.status === 200) expect(verdict).toEqual({ label: 'valid' });
    else expect(verdict).toEqual({ label: 'invalid', why: expected.why });

    // The service: a fresh max key from a fresh address (no rate limit or IP guard in the way).
    const { key } = await svc.key('max');
    const path = `${op.path}${query}`;
    const r = await rawRequest({
      port: svc.port,
      localAddress: `127.21.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`,
      requestLine: `GET ${path} HTTP/1.1`,
      headers: [
        ['Host', `127.0.0.1:${svc.port}`],
        ['X-API-Key', key],
        ['Connection', 'close'],
      ],
    });
    expect(r.status).toBe(expected.status);
    if (expected.status === 400) {
      expect(header(r, 'content-type')).toBe('application/problem+json');
      expect(r.body).toMatchObject({ type: problems.invalidParameter.type, status: 400, detail: expected.detail });
    }
  });
});

describe('the oracle reads the bytes sent, not the pieces it meant to send', () => {
  it('an empty pair is no parameter; an empty name with `=` is one', () => {
    expect(readQuery(undefined, '&&')).toEqual([]);
    expect(readQuery(undefined, '=').map((p) => [p.name, p.value])).toEqual([['', '']]);
    expect(readQuery(undefined, 'a&&b=').map((p) => [p.name, p.value])).toEqual([
      ['a', ''],
      ['b', ''],
    ]);
  });
  it('decodes `+` as a space except in a date-time value, and leaves broken escapes and raw bytes unread', () => {
    const list = operationById.get('listNews')!;
    expect(readQuery(list, 'since=2026-11-21T10:00:00+02:00&q=a+b').map((p) => p.value)).toEqual([
      '2026-11-21T10:00:00+02:00',
      'a b',
    ]);
    expect(readQuery(list, 'limit=5%zz')[0]).toMatchObject({ value: undefined, valueAsWritten: '5%zz' });
    expect(readQuery(list, 'q=\u00c3\u00a9')[0]).toMatchObject({ value: undefined, valueAsWritten: '\u00e9' });
  });
});
