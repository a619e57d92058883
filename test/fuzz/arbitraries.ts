/**
 * Request generators for the fuzz suite, derived from openapi.yaml: the operations and their query
 * parameters come from the bundled document (src/contract `operationParameters`), and every
 * parameter's values (valid, invalid, borderline) from the keywords of its schema (integer bounds,
 * enum, date-time format, string lengths and pattern). Nothing here lists an operation by hand.
 *
 * A generated value carries no label: `classify` reads the schema again to say whether the value the
 * server should decode is valid, invalid or ambiguous (the contract does not settle it), so encodings
 * that change what the server sees (double encoding, broken percent escapes) relabel correctly.
 */
import fc from 'fast-check';
import {
  openapiDocument,
  operationParameters,
  searchRankingMax,
  type ParameterSpec,
} from '../../src/contract/index.js';
import { ulidTimePrefix } from '../../src/store/ports/ids.js';

// ---------------------------------------------------------------------------------------------
// The contract's operations

export interface OperationSpec {
  operationId: string;
  path: string;
  params: ParameterSpec[];
}

const doc = openapiDocument();
export const operations: OperationSpec[] = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
  Object.entries<any>(item)
    .filter(([method]) => method === 'get')
    .map(([, op]) => ({ operationId: op.operationId as string, path, params: operationParameters(op.operationId) })),
);
export const operationById = new Map(operations.map((o) => [o.operationId, o]));

/** A schema with its `$ref` resolved (array items keep theirs in operationParameters). */
function deref(schema: any): any {
  return schema?.$ref
    ? deref(
        schema.$ref
          .slice(2)
          .split('/')
          .reduce((n: any, k: string) => n[k], doc),
      )
    : schema;
}
const allParamNames = [...new Set(operations.flatMap((o) => o.params.map((p) => p.name)))];

// ---------------------------------------------------------------------------------------------
// Labels: what the contract says about a value / a request

export type Label = 'valid' | 'invalid' | 'ambiguous';
export interface Verdict {
  label: Label;
  /** Why it is invalid or ambiguous, e.g. `date-time:impossible-date` (part of failure classes). */
  why?: string;
}
const VALID: Verdict = { label: 'valid' };

function daysInMonth(y: number, m: number): number {
  return [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][
    m - 1
  ]!;
}

/** RFC 3339 `date-time` (section 5.6), strictly; lower-case t/z, a space separator and `:60` are ambiguous. */
export function classifyDateTime(s: string): Verdict {
  const m = /^(\d{4})-(\d{2})-(\d{2})([Tt ])(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/.exec(s);
  if (!m) return { label: 'invalid', why: 'date-time:syntax' };
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[5], m[6], m[7]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo))
    return { label: 'invalid', why: 'date-time:impossible-date' };
  if (h > 23 || mi > 59 || se > 60) return { label: 'invalid', why: 'date-time:impossible-time' };
  if (m[10] !== undefined && (Number(m[11]) > 23 || Number(m[12]) > 59))
    return { label: 'invalid', why: 'date-time:impossible-offset' };
  if (se === 60) return { label: 'ambiguous', why: 'date-time:leap-second' };
  if (m[4] !== 'T' || m[9] === 'z') return { label: 'ambiguous', why: 'date-time:lower-case-or-space' };
  return VALID;
}

/** Whether `s` (the decoded value) meets the parameter's schema. */
export function classify(schema: any, s: string): Verdict {
  if (schema.type === 'array') {
    // form style, explode false (openapi.yaml `tickers`): items separated by commas.
    const items = s.split(',');
    if (
      (schema.minItems !== undefined && items.length < schema.minItems) ||
      (schema.maxItems !== undefined && items.length > schema.maxItems)
    ) {
      return { label: 'invalid', why: 'array:item-count' };
    }
    const verdicts = items.map((item) => classify(deref(schema.items), item));
    const bad = verdicts.find((v) => v.label === 'invalid') ?? verdicts.find((v) => v.label === 'ambiguous');
    return bad ? { label: bad.label, why: `array:${bad.why}` } : VALID;
  }
  if (schema.type === 'integer') {
    if (!/^[0-9]+$/.test(s)) return { label: 'invalid', why: 'integer:not-plain-digits' };
    const n = Number(s);
    if ((schema.minimum !== undefined && n < schema.minimum) || (schema.maximum !== undefined && n > schema.maximum)) {
      return { label: 'invalid', why: 'integer:out-of-range' };
    }
    if (/^0./.test(s)) return { label: 'ambiguous', why: 'integer:leading-zero' };
    return VALID;
  }
  if (Array.isArray(schema.enum))
    return schema.enum.includes(s) ? VALID : { label: 'invalid', why: 'enum:not-a-member' };
  if (schema.type === 'string') {
    const codePoints = [...s].length;
    if (schema.maxLength !== undefined && codePoints > schema.maxLength)
      return { label: 'invalid', why: `${schema.format ?? 'string'}:too-long` };
    if (schema.format === 'date-time') return classifyDateTime(s);
    if (schema.format !== undefined) return { label: 'ambiguous', why: `format:${schema.format}` };
    const fits = (n: number) =>
      (schema.minLength === undefined || n >= schema.minLength) &&
      (schema.maxLength === undefined || n <= schema.maxLength);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(s))
      return { label: 'invalid', why: 'string:pattern' };
    // JSON Schema counts code points; a server counting UTF-16 units differs only with astral characters.
    if (fits(codePoints) !== fits(s.length)) return { label: 'ambiguous', why: 'string:astral-length' };
    return fits(codePoints) ? VALID : { label: 'invalid', why: 'string:length' };
  }
  return { label: 'ambiguous', why: `schema:${schema.type}` };
}

// ---------------------------------------------------------------------------------------------
// Values, from the schema

/**
 * Every name Object.prototype has (`constructor`, `__proto__`, `toString`, `hasOwnProperty`,
 * `__defineGetter__`, ...): a table keyed by outside text that is a plain object answers them. Each
 * kind of value below draws from them too, as written and in capitals (a ticker's spelling).
 */
export const PROTOTYPE_NAMES: readonly string[] = Object.getOwnPropertyNames(Object.prototype);
const prototypeNameArb = fc.constantFrom(...PROTOTYPE_NAMES);
const prototypeValueArb = fc.oneof(
  prototypeNameArb,
  prototypeNameArb.map((n) => n.toUpperCase()),
);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

type Range = [min: number, max: number];
/** A year of 1970-2099 and the other fields of a date and time, each within its range. */
const dateTimeFields = (r: { mo: Range; d: Range; h: Range; mi: Range; s: Range }) => ({
  y: fc.integer({ min: 1970, max: 2099 }),
  mo: fc.integer({ min: r.mo[0], max: r.mo[1] }),
  d: fc.integer({ min: r.d[0], max: r.d[1] }),
  h: fc.integer({ min: r.h[0], max: r.h[1] }),
  mi: fc.integer({ min: r.mi[0], max: r.mi[1] }),
  s: fc.integer({ min: r.s[0], max: r.s[1] }),
});

function dateTimeArb(maxLength: number): fc.Arbitrary<string> {
  const offset = fc.oneof(
    fc.constant('Z'),
    fc
      .record({
        sign: fc.constantFrom('+', '-'),
        h: fc.integer({ min: 0, max: 23 }),
        m: fc.constantFrom(0, 30, 45, 59),
      })
      .map((o) => `${o.sign}${pad(o.h)}:${pad(o.m)}`),
  );
  const valid = fc
    .record({
      ...dateTimeFields({ mo: [1, 12], d: [1, 31], h: [0, 23], mi: [0, 59], s: [0, 59] }),
      frac: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
      off: offset,
    })
    .map(
      (t) =>
        `${pad(t.y, 4)}-${pad(t.mo)}-${pad(Math.min(t.d, daysInMonth(t.y, t.mo)))}T${pad(t.h)}:${pad(t.mi)}:${pad(t.s)}${t.frac ? `.${t.frac}` : ''}${t.off}`,
    );
  // Near the service's clock (2026-11), so the value actually filters.
  const recent = fc
    .record({ d: fc.integer({ min: 1, max: 30 }), h: fc.integer({ min: 0, max: 23 }), off: offset })
    .map((t) => `2026-11-${pad(t.d)}T${pad(t.h)}:00:00${t.off}`);
  const impossible = fc
    .record({
      // Fields outside their ranges too.
      ...dateTimeFields({ mo: [0, 13], d: [0, 32], h: [0, 25], mi: [0, 60], s: [0, 61] }),
      off: fc.constantFrom('Z', '+00:00', '+24:00', '-23:60', '+02:00'),
    })
    .map((t) => `${pad(t.y, 4)}-${pad(t.mo)}-${pad(t.d)}T${pad(t.h)}:${pad(t.mi)}:${pad(t.s)}${t.off}`);
  const malformed = fc.constantFrom(
    '2026-02-30T10:00:00Z',
    '2025-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-11-21T10:00:00',
    '2026-11-21',
    '10:00:00Z',
    '2026-11-21T10:00Z',
    '2026-11-21T10:00:00+02',
    '2026-11-21T10:00:00+0200',
    '2026-11-21T10:00:00+24:00',
    '2026-11-21T24:00:00Z',
    '26-11-21T10:00:00Z',
    '2026-11-21T10:00:00ZZ',
    ' 2026-11-21T10:00:00Z',
    '2026-11-21T10:00:00Z ',
    '2026-11-21T10:00:00.Z',
    '2026-11-21T1:00:00Z',
    '+002026-11-21T10:00:00Z',
    '2026-W47-6T10:00:00Z',
    '1795255200',
    'yesterday',
    'now',
    'Sat, 21 Nov 2026 10:00:00 GMT',
    '',
  );
  const ambiguous = fc.constantFrom(
    '2026-11-21t10:00:00z',
    '2026-11-21 10:00:00Z',
    '2026-11-20T23:59:60Z',
    '2026-06-30T23:59:60+00:00',
  );
  // Object.prototype's names (`valueOf`, `toString`: what a date object answers) are no date-times.
  const prototypeNames = prototypeValueArb;
  const tooLong = fc.integer({ min: 1, max: 30 }).map((n) => `2026-11-21T10:00:00.${'1'.repeat(maxLength - 25 + n)}Z`);
  return fc.oneof(
    { arbitrary: valid, weight: 4 },
    { arbitrary: recent, weight: 3 },
    { arbitrary: impossible, weight: 3 },
    { arbitrary: malformed, weight: 4 },
    { arbitrary: ambiguous, weight: 1 },
    { arbitrary: tooLong, weight: 1 },
    { arbitrary: prototypeNames, weight: 1 },
  );
}

function integerArb(schema: any): fc.Arbitrary<string> {
  const min: number = schema.minimum ?? -(2 ** 31);
  const max: number = schema.maximum ?? 2 ** 31 - 1;
  return fc.oneof(
    { arbitrary: fc.integer({ min, max }).map(String), weight: 6 },
    { arbitrary: fc.constantFrom(min, max, min - 1, max + 1).map(String), weight: 3 },
    { arbitrary: fc.integer({ min: max + 1, max: 2 ** 31 - 1 }).map(String), weight: 1 },
    { arbitrary: fc.integer({ min: -(2 ** 31), max: min - 1 }).map(String), weight: 1 },
    { arbitrary: fc.integer({ min, max }).map((n) => `${'0'.repeat(1 + (n % 9))}${n}`), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        '2147483648',
        '9007199254740993',
        '99999999999999999999',
        '999999999',
        '2.5',
        '1.0',
        '1e1',
        '0x10',
        '0b1',
        '0o7',
        '+5',
        '-0',
        ' 5',
        '5 ',
        '',
        'ten',
        '\uff15',
        '\u0663',
        'NaN',
        'Infinity',
        '-Infinity',
        'null',
        'true',
        '[]',
        '{}',
        '5,6',
        '5;6',
        '5\u0000',
        '\u20075',
      ),
      weight: 3,
    },
    { arbitrary: prototypeValueArb, weight: 1 },
  );
}

function enumArb(values: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...values), weight: 6 },
    { arbitrary: fc.constantFrom(...values).map((v) => v.toUpperCase()), weight: 1 },
    { arbitrary: fc.constantFrom(...values).map((v) => v[0]!.toUpperCase() + v.slice(1)), weight: 1 },
    { arbitrary: fc.constantFrom(...values).map((v) => `${v} `), weight: 1 },
    { arbitrary: fc.constant(values.join(',')), weight: 1 },
    { arbitrary: fc.constantFrom('', 'urgent', 'null', '*', '\u0000'), weight: 1 },
    { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
    { arbitrary: prototypeValueArb, weight: 1 },
  );
}

const oddChars = [
  '\u0000',
  '\u0001',
  '\u007f',
  '\r',
  '\n',
  '\t',
  '"',
  '\\',
  '<',
  '>',
  '%',
  '&',
  '=',
  '+',
  '#',
  '?',
  '/',
  ';',
  '[',
  ']',
  '{',
  '}',
  "'",
  '\u00e9',
  '\u20ac',
  '\u2019',
  '\ud83d\udcc8',
  '\u0301',
];

function stringArb(schema: any): fc.Arbitrary<string> {
  const min: number = schema.minLength ?? 0;
  const max: number = schema.maxLength ?? 1000;
  const unit = fc.oneof(
    { arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz FED0123456789'.split('')), weight: 8 },
    { arbitrary: fc.constantFrom(...oddChars), weight: 2 },
  );
  const spaces = fc.constantFrom(' ', '\t', '\u00a0', '\u3000', '\n', '\u2028', '\ufeff');
  return fc.oneof(
    { arbitrary: fc.string({ unit, minLength: min, maxLength: Math.min(max, 40) }), weight: 6 },
    { arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, 12) }), weight: 2 },
    { arbitrary: fc.string({ unit, maxLength: Math.max(0, min - 1) }), weight: 2 },
    { arbitrary: fc.integer({ min: Math.max(0, max - 2), max: max + 3 }).map((n) => 'q'.repeat(n)), weight: 1 },
    { arbitrary: fc.integer({ min: max + 1, max: max * 3 }).map((n) => 'w'.repeat(n)), weight: 1 },
    { arbitrary: fc.string({ unit: spaces, minLength: Math.max(1, min), maxLength: 8 }), weight: 1 },
    {
      arbitrary: fc
        .integer({ min: Math.max(1, Math.floor(max / 2) - 2), max: Math.floor(max / 2) + 2 })
        .map((n) => '\ud83d\udcc8'.repeat(n)),
      weight: 1,
    },
    // Object.prototype's names as the terms of a query: alone, several, among ordinary words (cut to the schema's
    // length).
    {
      arbitrary: fc
        .array(
          fc.oneof(
            { arbitrary: prototypeValueArb, weight: 3 },
            { arbitrary: fc.constantFrom('fed', 'rates', 'apple', 'the'), weight: 1 },
          ),
          { minLength: 1, maxLength: 4 },
        )
        .map((ws) => ws.join(' ').slice(0, max).padEnd(min, 'x')),
      weight: 2,
    },
  );
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Values of a fixed-length pattern string (an article id, a ULID): valid ones near the service's clock
 * (so a cursor actually cuts the archive) and anywhere, and near misses (case, length, letters outside
 * the alphabet, a first character past 7).
 */
function idArb(schema: any): fc.Arbitrary<string> {
  const len: number = schema.minLength;
  const tail = (n: number) => fc.string({ unit: fc.constantFrom(...CROCKFORD.split('')), minLength: n, maxLength: n });
  const recent = fc
    .record({ d: fc.integer({ min: 1, max: 30 }), h: fc.integer({ min: 0, max: 23 }), rest: tail(len - 10) })
    .map((t) => ulidTimePrefix(Date.UTC(2026, 10, t.d, t.h)) + t.rest);
  const anywhere = fc.tuple(fc.constantFrom(...'01234567'.split('')), tail(len - 1)).map(([a, b]) => a + b);
  const valid = fc.oneof({ arbitrary: recent, weight: 3 }, { arbitrary: anywhere, weight: 1 });
  return fc.oneof(
    { arbitrary: valid, weight: 6 },
    { arbitrary: valid.map((v) => v.toLowerCase()), weight: 1 },
    { arbitrary: valid.map((v) => v.slice(1)), weight: 1 },
    { arbitrary: valid.map((v) => `${v}0`), weight: 1 },
    {
      arbitrary: fc
        .tuple(valid, fc.constantFrom('I', 'L', 'O', 'U', '-', ' '))
        .map(([v, c]) => v.slice(0, 5) + c + v.slice(6)),
      weight: 1,
    },
    { arbitrary: valid.map((v) => `8${v.slice(1)}`), weight: 1 },
    { arbitrary: fc.constantFrom('', 'null', '0', '01M7Z87BJ3K8W3Q2ZP7R9T4V6'), weight: 1 },
    { arbitrary: prototypeValueArb, weight: 1 },
  );
}

/** Values of a comma-separated array parameter (`tickers`), from its items' schema and its item counts. */
function listArb(schema: any): fc.Arbitrary<string> {
  const item = deref(schema.items);
  const min: number = schema.minItems ?? 0;
  const max: number = schema.maxItems ?? 10;
  const symbol = fc.oneof(
    {
      arbitrary: fc.constantFrom('AAPL', 'MSFT', 'SPY', 'JPM', 'NVDA', 'BRK.B', 'BTC-USD', 'EUR/USD', 'X:Y'),
      weight: 6,
    },
    { arbitrary: fc.stringMatching(new RegExp(item.pattern)), weight: 2 },
  );
  const odd = fc.oneof(
    fc.constantFrom('aapl', 'Aapl', '', ' AAPL', 'AAPL ', '-X', '.B', 'A+B', 'A_B', '\u00c4PPLE', '\ud83d\udcc8'),
    fc.integer({ min: (item.maxLength ?? 16) + 1, max: (item.maxLength ?? 16) + 4 }).map((n) => 'A'.repeat(n)),
    // As written (`constructor`: not a symbol) and in capitals (`CONSTRUCTOR`, `VALUEOF`: symbols of the pattern).
    prototypeValueArb,
  );
  const list = (unit: fc.Arbitrary<string>, lo: number, hi: number) =>
    fc.array(unit, { minLength: lo, maxLength: hi }).map((a) => a.join(','));
  return fc.oneof(
    { arbitrary: list(symbol, Math.max(1, min), max), weight: 6 },
    { arbitrary: list(fc.oneof({ arbitrary: symbol, weight: 3 }, { arbitrary: odd, weight: 1 }), 1, 3), weight: 2 },
    { arbitrary: list(symbol, max + 1, max + 3), weight: 1 },
    {
      arbitrary: fc.constantFrom('', ',', 'AAPL,', ',AAPL', 'AAPL,,MSFT', 'AAPL;MSFT', 'AAPL MSFT', '[AAPL]'),
      weight: 1,
    },
    { arbitrary: list(prototypeValueArb, 1, Math.max(1, max)), weight: 1 },
  );
}

/** Decoded values for one parameter, read from its schema only. */
export function valueArb(schema: any): fc.Arbitrary<string> {
  if (schema.type === 'array') return listArb(schema);
  if (
    schema.type === 'string' &&
    schema.pattern &&
    schema.minLength !== undefined &&
    schema.minLength === schema.maxLength
  )
    return idArb(schema);
  if (schema.type === 'integer') return integerArb(schema);
  if (Array.isArray(schema.enum)) return enumArb(schema.enum);
  if (schema.format === 'date-time') return dateTimeArb(schema.maxLength ?? 40);
  return stringArb(schema);
}

// ---------------------------------------------------------------------------------------------
// Encodings of a query component

export const ENCODINGS = ['std', 'form', 'full', 'lower', 'minimal', 'rawUtf8', 'double', 'badPercent'] as const;
export type Encoding = (typeof ENCODINGS)[number];
const encodingArb: fc.Arbitrary<Encoding> = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constantFrom<Encoding>('std', 'form', 'minimal'), weight: 8 },
  { arbitrary: fc.constantFrom<Encoding>('full', 'lower'), weight: 2 },
  { arbitrary: fc.constantFrom<Encoding>('rawUtf8', 'double', 'badPercent'), weight: 1 },
);
const BAD_PERCENT = ['%', '%z', '%zz', '%E0%80', '%C0%AF', '%ED%A0%80', '%FF', '%%'];

const pctAll = (s: string, lower: boolean) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) => `%${b.toString(16).padStart(2, '0')[lower ? 'toLowerCase' : 'toUpperCase']()}`)
    .join('');
const utf8AsLatin1 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

export interface Encoded {
  /** The bytes sent (one char = one byte, latin1). */
  raw: string;
  /** What the server should read (undefined: no defined reading, e.g. a broken escape). */
  decoded: string | undefined;
  /** The encoding leaves the reading to the server (raw non-ASCII bytes, broken escapes). */
  undefinedReading: boolean;
}

/**
 * `plusIsLiteral`: in a date-time parameter a raw `+` is the offset sign (openapi.yaml, `since`);
 * elsewhere it is a space (form encoding). `salt` picks a broken escape for `badPercent`.
 */
export function encode(
  s: string,
  enc: Encoding,
  opts: { plusIsLiteral: boolean; isName: boolean; salt: number },
): Encoded {
  const std = encodeURIComponent(s);
  switch (enc) {
    case 'std':
      return { raw: std, decoded: s, undefinedReading: false };
    case 'form':
      if (opts.plusIsLiteral && s.includes(' ')) return { raw: std, decoded: s, undefinedReading: false };
      return { raw: std.replace(/%20/g, '+'), decoded: s, undefinedReading: false };
    case 'full':
    case 'lower':
      return { raw: pctAll(s, enc === 'lower'), decoded: s, undefinedReading: false };
    case 'minimal':
    case 'rawUtf8': {
      let raw = '';
      for (const c of s) {
        if (/[A-Za-z0-9\-._~!$'()*,;:@/?]/.test(c)) raw += c;
        else if (c === '+') raw += opts.plusIsLiteral ? '+' : '%2B';
        else if (c === '=') raw += opts.isName ? '%3D' : '=';
        else if (enc === 'rawUtf8' && c.codePointAt(0)! > 0x7f) raw += utf8AsLatin1(c);
        else raw += encodeURIComponent(c);
      }
      return { raw, decoded: s, undefinedReading: enc === 'rawUtf8' && /[^\u0000-\u007f]/.test(s) };
    }
    case 'double':
      return { raw: encodeURIComponent(std), decoded: std, undefinedReading: false };
    case 'badPercent':
      return { raw: std + BAD_PERCENT[opts.salt % BAD_PERCENT.length]!, decoded: undefined, undefinedReading: true };
  }
}

// ---------------------------------------------------------------------------------------------
// Query parameters

export interface ParamPiece {
  name: string;
  value: string;
  nameEnc: Encoding;
  valueEnc: Encoding;
  /** `?name` without `=`. */
  noEquals: boolean;
  salt: number;
}

const pieceArb = (name: fc.Arbitrary<string>, value: fc.Arbitrary<string>): fc.Arbitrary<ParamPiece> =>
  fc.record({
    name,
    value,
    nameEnc: fc.oneof(
      { withCrossShrink: true },
      { arbitrary: fc.constant<Encoding>('std'), weight: 12 },
      { arbitrary: encodingArb, weight: 1 },
    ),
    valueEnc: encodingArb,
    noEquals: fc.oneof(
      { withCrossShrink: true },
      { arbitrary: fc.constant(false), weight: 30 },
      { arbitrary: fc.constant(true), weight: 1 },
    ),
    salt: fc.nat(1000),
  });

/** Names an operation does not take: Object.prototype's names, other operations' names, brackets, case, long. */
function unknownNameArb(op: OperationSpec): fc.Arbitrary<string> {
  const own = op.params.map((p) => p.name);
  const others = allParamNames.filter((n) => !own.includes(n));
  const variants = own.flatMap((n) => [
    n.toUpperCase(),
    `${n}[]`,
    `${n}[0]`,
    `${n}[a]`,
    `${n}.x`,
    ` ${n}`,
    `${n} `,
    `${n}\u0000`,
  ]);
  return fc.oneof(
    {
      arbitrary: fc.constantFrom(...PROTOTYPE_NAMES, '__proto__[x]', 'constructor[prototype][x]', 'prototype'),
      weight: 3,
    },
    {
      arbitrary: fc.constantFrom('page', 'offset', 'api_key', 'X-API-Key', 'cursor', 'tickers', 'sort', ''),
      weight: 2,
    },
    ...(others.length ? [{ arbitrary: fc.constantFrom(...others), weight: 2 }] : []),
    ...(variants.length ? [{ arbitrary: fc.constantFrom(...variants), weight: 2 }] : []),
    {
      arbitrary: fc.string({
        unit: fc.constantFrom(...'abcxyz_-.[]'.split(''), ...oddChars),
        minLength: 1,
        maxLength: 12,
      }),
      weight: 2,
    },
    { arbitrary: fc.integer({ min: 90, max: 400 }).map((n) => `p${'x'.repeat(n)}`), weight: 1 },
  );
}

export interface QuerySpec {
  pieces: ParamPiece[];
  /** Bare `?` with nothing after it, or empty pieces (`&&`) between parameters. */
  bareQuestionMark: boolean;
  emptyPieces: boolean;
}

export function queryArb(op: OperationSpec): fc.Arbitrary<QuerySpec> {
  const documented = op.params.map((p) =>
    fc.option(pieceArb(fc.constant(p.name), valueArb(p.schema)), { nil: undefined, freq: p.required ? 8 : 2 }),
  );
  const anyDocumented = op.params.length ? fc.constantFrom(...op.params) : undefined;
  return fc
    .record({
      documented: fc.tuple(...documented),
      unknown: fc.array(pieceArb(unknownNameArb(op), fc.oneof(fc.constantFrom('1', ''), fc.string({ maxLength: 6 }))), {
        maxLength: 2,
      }),
      unknownOn: fc.nat(6),
      repeated: anyDocumented
        ? fc.array(
            anyDocumented.chain((p) => pieceArb(fc.constant(p.name), valueArb(p.schema))),
            { maxLength: 1 },
          )
        : fc.constant([] as ParamPiece[]),
      repeatOn: fc.nat(8),
      rotate: fc.nat(4),
      bareQuestionMark: fc.oneof(
        { withCrossShrink: true },
        { arbitrary: fc.constant(false), weight: 15 },
        { arbitrary: fc.constant(true), weight: 1 },
      ),
      emptyPieces: fc.oneof(
        { withCrossShrink: true },
        { arbitrary: fc.constant(false), weight: 15 },
        { arbitrary: fc.constant(true), weight: 1 },
      ),
    })
    .map((r) => {
      const pieces = [
        ...r.documented.filter((p): p is ParamPiece => p !== undefined),
        ...(r.unknownOn === 0 ? r.unknown : []),
        ...(r.repeatOn === 0 ? r.repeated : []),
      ];
      const k = pieces.length ? r.rotate % pieces.length : 0;
      return {
        pieces: [...pieces.slice(k), ...pieces.slice(0, k)],
        bareQuestionMark: r.bareQuestionMark,
        emptyPieces: r.emptyPieces,
      };
    });
}

export interface RenderedQuery {
  /** `?…` or '' */
  raw: string;
  /** Per piece: the name as sent and as the server should decode it. */
  names: { raw: string; decoded: string | undefined }[];
  verdict: Verdict;
  /** Raw bytes over 0x7F in the target: not a valid request target (RFC 3986), a server may refuse it. */
  rawBytes: boolean;
  /** Every name and value as sent and as decoded (client input a problem detail may echo). */
  inputs: string[];
}

/**
 * The contract's rules between parameters (each one valid alone): `after` with `before` is a `400`
 * (listNews); so is a search page past the ranking, `offset + limit` over searchRankingMax (an absent
 * value is its default). Both make the request a 400 whatever the other parameters are.
 */
export function crossParameterVerdicts(
  op: OperationSpec | undefined,
  values: Map<string, string | undefined>,
): Verdict[] {
  if (!op) return [];
  const takes = (name: string) => op.params.some((p) => p.name === name);
  const out: Verdict[] = [];
  if (takes('after') && takes('before') && values.has('after') && values.has('before'))
    out.push({ label: 'invalid', why: 'cursor-conflict' });
  if (takes('offset') && takes('limit')) {
    const num = (name: string): number | undefined => {
      if (!values.has(name)) return op.params.find((p) => p.name === name)!.schema.default as number;
      const v = values.get(name);
      return v !== undefined && /^[0-9]{1,9}$/.test(v) ? Number(v) : undefined;
    };
    const offset = num('offset');
    const limit = num('limit');
    if (offset !== undefined && limit !== undefined && offset + limit > searchRankingMax)
      out.push({ label: 'invalid', why: 'offset-past-ranking' });
  }
  return out;
}

/** One `name=value` pair of a query string as the contract reads it. */
export interface QueryPair {
  /** The name and value as sent (latin1: one char per byte). */
  rawName: string;
  rawValue: string;
  /** Decoded; undefined when the bytes have no defined reading (a broken escape, a raw byte over 0x7F). */
  name: string | undefined;
  value: string | undefined;
  /** The value read as UTF-8 bytes with whatever escapes decode (for values without a defined reading). */
  valueAsWritten: string;
}

/** Percent-decoding of one component (form rules: `+` is a space unless `plusIsLiteral`). */
function decodeComponent(raw: string, plusIsLiteral: boolean): string | undefined {
  if (/[^\u0000-\u007f]/.test(raw)) return undefined;
  try {
    return decodeURIComponent(plusIsLiteral ? raw : raw.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function asWritten(raw: string, plusIsLiteral: boolean): string {
  const escaped = raw.replace(/[\u0080-\u00ff]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return decodeComponent(escaped, plusIsLiteral) ?? raw;
}

/**
 * The contract's reading of a query string (`qs`: everything after the first `?` of the target, a
 * later `?` being an ordinary character): `application/x-www-form-urlencoded` as the WHATWG URL
 * standard parses it. Split on `&`; an empty piece (`?&`, `&&`, a bare `?`) is no pair at all; the
 * name ends at the first `=` (none: the value is empty); names and values are percent-decoded as
 * UTF-8 with `+` a space, except in a date-time value (`since`), where a `+` is the offset sign
 * (openapi.yaml, `since`). Names are compared exactly: `LIMIT` and ` limit` are not `limit`, `=1`
 * has the empty name. Bytes with no defined reading (a broken escape, a raw byte over 0x7F) give
 * `undefined` instead of guessing a replacement.
 */
export function readQuery(op: OperationSpec | undefined, qs: string): QueryPair[] {
  const pairs: QueryPair[] = [];
  for (const piece of qs.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const rawName = eq === -1 ? piece : piece.slice(0, eq);
    const rawValue = eq === -1 ? '' : piece.slice(eq + 1);
    const name = decodeComponent(rawName, false);
    const plusIsLiteral = op?.params.find((d) => d.name === name)?.schema.format === 'date-time';
    pairs.push({
      rawName,
      rawValue,
      name,
      value: decodeComponent(rawValue, plusIsLiteral),
      valueAsWritten: asWritten(rawValue, plusIsLiteral),
    });
  }
  return pairs;
}

/** The contract's verdict on a query string (`qs` without the `?`) for `op`, read by `readQuery`. */
export function queryVerdict(op: OperationSpec | undefined, qs: string): Verdict {
  const verdicts: Verdict[] = [];
  const seen = new Map<string, number>();
  /** Each parameter name as the server reads it, and its value (undefined: no defined reading). */
  const decodedValues = new Map<string, string | undefined>();
  for (const pair of readQuery(op, qs)) {
    const name = pair.name ?? pair.rawName;
    seen.set(name, (seen.get(name) ?? 0) + 1);
    if (pair.name === undefined) {
      verdicts.push({ label: 'invalid', why: 'name:broken-escape' });
      continue;
    }
    decodedValues.set(name, pair.value);
    const param = op?.params.find((d) => d.name === name);
    if (!param) verdicts.push({ label: 'invalid', why: 'unknown-parameter' });
    else if (pair.value === undefined) {
      // No defined reading (raw non-ASCII bytes, a broken escape). An integer, enum or date-time
      // that is invalid as written stays invalid however it is read; a free string is ambiguous.
      const freeString = param.schema.type === 'string' && !param.schema.enum && !param.schema.format;
      const written = classify(param.schema, pair.valueAsWritten);
      verdicts.push(
        !freeString && written.label === 'invalid'
          ? written
          : {
              label: 'ambiguous',
              why: /[^\u0000-\u007f]/.test(pair.rawValue) ? 'encoding:raw-bytes' : 'encoding:broken-escape',
            },
      );
    } else verdicts.push(classify(param.schema, pair.value));
  }
  for (const [name, count] of seen)
    if (count > 1)
      verdicts.push({
        label: 'invalid',
        why: op?.params.some((d) => d.name === name) ? 'repeated-parameter' : 'unknown-parameter',
      });
  for (const d of op?.params ?? [])
    if (d.required && !seen.has(d.name)) verdicts.push({ label: 'invalid', why: 'missing-required' });
  verdicts.push(...crossParameterVerdicts(op, decodedValues));
  return verdicts.find((v) => v.label === 'invalid') ?? verdicts.find((v) => v.label === 'ambiguous') ?? VALID;
}

/**
 * The query string as sent, and the contract's verdict on it for `op`. The verdict and the names
 * come from reading the bytes sent (`readQuery`), not from the pieces that made them: a piece can
 * render to nothing (an empty name without `=`), and what was never sent is no parameter.
 */
export function renderQuery(op: OperationSpec | undefined, q: QuerySpec): RenderedQuery {
  const parts: string[] = [];
  const inputs: string[] = [];
  for (const p of q.pieces) {
    const schema = op?.params.find((d) => d.name === p.name)?.schema;
    const plusIsLiteral = schema?.format === 'date-time';
    const n = encode(p.name, p.nameEnc, { plusIsLiteral: false, isName: true, salt: p.salt });
    const v = encode(p.noEquals ? '' : p.value, p.noEquals ? 'std' : p.valueEnc, {
      plusIsLiteral,
      isName: false,
      salt: p.salt,
    });
    parts.push(p.noEquals ? n.raw : `${n.raw}=${v.raw}`);
    inputs.push(n.raw, n.decoded ?? '', v.raw, v.decoded ?? '');
  }
  let raw = parts.join(q.emptyPieces ? '&&' : '&');
  if (q.emptyPieces && raw) raw = `&${raw}&`;
  const names = readQuery(op, raw).map((pair) => ({ raw: pair.rawName, decoded: pair.name }));
  return {
    raw: raw !== '' || q.bareQuestionMark ? `?${raw}` : '',
    names,
    verdict: queryVerdict(op, raw),
    rawBytes: /[^\u0000-\u007f]/.test(raw),
    inputs,
  };
}

// ---------------------------------------------------------------------------------------------
// Request lines, keys, clients

/** Ways of writing a known path. `plain` is the path as documented. */
export const PATH_FORMS = [
  'plain',
  'doubleSlashLead',
  'doubleSlashMid',
  'encodedSlash',
  'encodedSlashLower',
  'trailingSlash',
  'dotSegment',
  'dotDotSegment',
  'mixedCase',
  'encodedChar',
  'fragment',
] as const;
export type PathForm = (typeof PATH_FORMS)[number];
/** Ways of writing the request target around the path (RFC 9112 §3.2). */
export const TARGET_FORMS = [
  'origin',
  'absolute',
  'absoluteLocalhost',
  'absoluteUpperScheme',
  'absoluteOtherHost',
  'absoluteHttps',
] as const;
export type TargetForm = (typeof TARGET_FORMS)[number];

export function writePath(path: string, form: PathForm, salt: number): { path: string; suffix: string } {
  const segs = path.split('/').slice(1); // ['v1', 'news', ...]
  const i = salt % Math.max(1, segs.length - 1); // a slash between segments i and i+1
  switch (form) {
    case 'plain':
      return { path, suffix: '' };
    case 'doubleSlashLead':
      return { path: `/${path}`, suffix: '' };
    case 'doubleSlashMid':
      return { path: `/${[...segs.slice(0, i + 1), '', ...segs.slice(i + 1)].join('/')}`, suffix: '' };
    case 'encodedSlash':
    case 'encodedSlashLower':
      return {
        path: `/${segs.slice(0, i + 1).join('/')}${form === 'encodedSlash' ? '%2F' : '%2f'}${segs.slice(i + 1).join('/')}`,
        suffix: '',
      };
    case 'trailingSlash':
      return { path: `${path}/`, suffix: '' };
    case 'dotSegment':
      return { path: `/${[...segs.slice(0, i + 1), '.', ...segs.slice(i + 1)].join('/')}`, suffix: '' };
    case 'dotDotSegment':
      return { path: `/${[...segs.slice(0, i + 1), 'x', '..', ...segs.slice(i + 1)].join('/')}`, suffix: '' };
    case 'mixedCase':
      return { path: path.replace(/[a-z]/g, (c, k: number) => ((k + salt) % 2 ? c.toUpperCase() : c)), suffix: '' };
    case 'encodedChar': {
      const letters = [...path].map((c, k) => (/[a-z]/.test(c) ? k : -1)).filter((k) => k >= 0);
      const k = letters[salt % letters.length]!;
      return {
        path: `${path.slice(0, k)}%${path.charCodeAt(k).toString(16).toUpperCase()}${path.slice(k + 1)}`,
        suffix: '',
      };
    }
    case 'fragment':
      return { path, suffix: '#frag' };
  }
}

export function writeTarget(originForm: string, form: TargetForm, port: number): string {
  switch (form) {
    case 'origin':
      return originForm;
    case 'absolute':
      return `http://127.0.0.1:${port}${originForm}`;
    case 'absoluteLocalhost':
      return `http://localhost:${port}${originForm}`;
    case 'absoluteUpperScheme':
      return `HTTP://127.0.0.1:${port}${originForm}`;
    case 'absoluteOtherHost':
      return `http://example.com${originForm}`;
    case 'absoluteHttps':
      return `https://127.0.0.1:${port}${originForm}`;
  }
}

/** Paths the contract does not have (some near misses of those it has). */
export const unknownPathArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '/',
    '/v1',
    '/v1/',
    '/v2/news',
    '/v1/newsx',
    '/v1/news/search/x',
    '/v1/account',
    '/v1/stream',
    '/v1/account/usage/x',
    '/%',
    '/%zz',
    '/v1/%00',
    '/\u00c3\u00a9',
    '/..',
    '/v1/news;x',
    '/v1/news/..',
    '/index.html',
  ),
  ...operations.map((o) => fc.constant(`${o.path}x`)),
  fc.integer({ min: 200, max: 6000 }).map((n) => `/v1/${'a'.repeat(n)}`),
  fc.stringMatching(/^\/[a-z0-9._~-]{1,20}(\/[a-z0-9._~-]{1,20}){0,2}$/),
);

export const KEY_STATES = [
  'none',
  'unknown',
  'sandbox',
  'starter',
  'pro',
  'max',
  'free',
  'expired',
  'deactivated',
] as const;
export type KeyState = (typeof KEY_STATES)[number];
export const keyStateArb: fc.Arbitrary<KeyState> = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constantFrom<KeyState>('starter', 'pro', 'max'), weight: 6 },
  { arbitrary: fc.constantFrom<KeyState>('none', 'unknown', 'sandbox', 'free', 'expired', 'deactivated'), weight: 3 },
);

/** How the key header is written (Node trims OWS; a repeated header is joined with `, `). */
export const KEY_HEADERS = ['normal', 'lowerName', 'padded', 'duplicate', 'empty'] as const;
export type KeyHeader = (typeof KEY_HEADERS)[number];

/** Request-level oddities; all but `none` and `http10` make the request malformed. */
export const EXTRAS = [
  'none',
  'http10',
  'missingHost',
  'hugeHeader',
  'badVersion',
  'rawSpace',
  'rawControl',
  'lowercaseMethod',
  'bogusMethod',
] as const;
export type Extra = (typeof EXTRAS)[number];
export const MALFORMED: ReadonlySet<Extra> = new Set([
  'missingHost',
  'hugeHeader',
  'badVersion',
  'rawSpace',
  'rawControl',
  'lowercaseMethod',
  'bogusMethod',
]);

export type Target =
  | {
      kind: 'operation';
      operationId: string;
      pathForm: PathForm;
      targetForm: TargetForm;
      query: QuerySpec;
      salt: number;
    }
  | { kind: 'unknownPath'; path: string; query: QuerySpec };

export interface FuzzRequest {
  target: Target;
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS' | 'PATCH';
  extra: Extra;
  keyState: KeyState;
  keyHeader: KeyHeader;
  /** Which of the case's client addresses sends it. */
  ipSlot: number;
  /** Fake-clock advance before sending. */
  advanceMs: number;
}

export interface FuzzCase {
  requests: FuzzRequest[];
}

const noQuery: QuerySpec = { pieces: [], bareQuestionMark: false, emptyPieces: false };

const opTargetArb = (opts: { odd: boolean }): fc.Arbitrary<Target> =>
  fc.oneof(
    ...operations.map((op) =>
      fc.record({
        kind: fc.constant('operation' as const),
        operationId: fc.constant(op.operationId),
        pathForm: opts.odd
          ? fc.oneof(
              { withCrossShrink: true },
              { arbitrary: fc.constant<PathForm>('plain'), weight: 12 },
              { arbitrary: fc.constantFrom(...PATH_FORMS.filter((f) => f !== 'plain')), weight: 5 },
            )
          : fc.constant<PathForm>('plain'),
        targetForm: opts.odd
          ? fc.oneof(
              { withCrossShrink: true },
              { arbitrary: fc.constant<TargetForm>('origin'), weight: 12 },
              { arbitrary: fc.constantFrom(...TARGET_FORMS.filter((f) => f !== 'origin')), weight: 4 },
            )
          : fc.constant<TargetForm>('origin'),
        query: queryArb(op),
        salt: fc.nat(1000),
      }),
    ),
  );

export const advanceArb: fc.Arbitrary<number> = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constant(0), weight: 6 },
  { arbitrary: fc.integer({ min: 1, max: 5_000 }), weight: 3 },
  { arbitrary: fc.integer({ min: 5_000, max: 70_000 }), weight: 1 },
  { arbitrary: fc.constantFrom(60_000, 600_000), weight: 1 },
);

export const fuzzRequestArb: fc.Arbitrary<FuzzRequest> = fc.record({
  target: fc.oneof(
    { withCrossShrink: true },
    { arbitrary: opTargetArb({ odd: true }), weight: 12 },
    {
      arbitrary: fc.record({
        kind: fc.constant('unknownPath' as const),
        path: unknownPathArb,
        query: fc.oneof(fc.constant(noQuery), queryArb(operations[0]!)),
      }),
      weight: 1,
    },
  ),
  method: fc.oneof(
    { withCrossShrink: true },
    { arbitrary: fc.constant('GET' as const), weight: 30 },
    {
      arbitrary: fc.constantFrom(
        'HEAD' as const,
        'POST' as const,
        'PUT' as const,
        'DELETE' as const,
        'OPTIONS' as const,
        'PATCH' as const,
      ),
      weight: 2,
    },
  ),
  extra: fc.oneof(
    { withCrossShrink: true },
    { arbitrary: fc.constant<Extra>('none'), weight: 40 },
    { arbitrary: fc.constantFrom(...EXTRAS.filter((e) => e !== 'none')), weight: 3 },
  ),
  keyState: keyStateArb,
  keyHeader: fc.oneof(
    { withCrossShrink: true },
    { arbitrary: fc.constant<KeyHeader>('normal'), weight: 20 },
    { arbitrary: fc.constantFrom(...KEY_HEADERS.filter((k) => k !== 'normal')), weight: 2 },
  ),
  ipSlot: fc.nat(2),
  advanceMs: advanceArb,
});

/** A case prints as its request lines (fast-check shows it as the counterexample). */
export const fuzzCaseArb: fc.Arbitrary<FuzzCase> = fc
  .record({ requests: fc.array(fuzzRequestArb, { minLength: 1, maxLength: 5 }) })
  .map((c) => Object.defineProperty(c, fc.toStringMethod, { value: () => `\n${describeCase(c)}`, enumerable: false }));

// ---------------------------------------------------------------------------------------------
// Rate-limit sequences: many plain requests on a few keys, with small clock steps

export const RATE_TIERS = ['starter', 'pro', 'max', 'expired'] as const;
export interface RateStep {
  key: number;
  operationId: string;
  query: QuerySpec;
  advanceMs: number;
}
export interface RateCase {
  keys: (typeof RATE_TIERS)[number][];
  steps: RateStep[];
}

export const rateCaseArb: fc.Arbitrary<RateCase> = fc
  .record({
    keys: fc.array(fc.constantFrom(...RATE_TIERS), { minLength: 1, maxLength: 3 }),
    steps: fc.array(
      fc
        .tuple(
          fc.oneof(
            ...operations.map((op) => fc.record({ operationId: fc.constant(op.operationId), query: queryArb(op) })),
          ),
          fc.nat(2),
          fc.oneof(
            { arbitrary: fc.constant(0), weight: 3 },
            { arbitrary: fc.integer({ min: 1, max: 2_500 }), weight: 6 },
            { arbitrary: fc.integer({ min: 2_500, max: 61_000 }), weight: 1 },
          ),
        )
        .map(([t, key, advanceMs]) => ({ key, operationId: t.operationId, query: t.query, advanceMs })),
      { minLength: 10, maxLength: 140 },
    ),
  })
  .map((c) =>
    Object.defineProperty(c, fc.toStringMethod, { value: () => `\n${describeRateCase(c)}`, enumerable: false }),
  );

export function describeRateCase(c: RateCase): string {
  const lines = c.steps.map((_s, i) => `  ${i + 1}. ${describeRateStep(c, i)}`);
  return `keys ${c.keys.join(', ')}; one client address per key\n${lines.join('\n')}`;
}

/** One step of a rate-limit sequence: its full request line, the key's role, the clock, the contract's verdict. */
export function describeRateStep(c: RateCase, i: number): string {
  const s = c.steps[i]!;
  const op = operationById.get(s.operationId)!;
  const k = s.key % c.keys.length;
  const query = renderQuery(op, s.query);
  return `${showLine(`GET ${op.path}${query.raw} HTTP/1.1`)}   [key #${k}: ${c.keys[k]}, clock +${s.advanceMs} ms; ${showVerdict(query.verdict)}]`;
}

// ---------------------------------------------------------------------------------------------
// Rendering

export const short = (s: string, n = 400) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/**
 * A request line as sent, readable in a report: long runs written once (`compactRepeats`); control
 * characters, bytes over 0x7E and the backslash escaped (`\x00`, `\xc3`, `\\`), so an empty pair,
 * a space or a stray byte is visible. Never cut short.
 */
export function showLine(line: string): string {
  const escaped = line.replace(/[\\\u0000-\u001f\u007f-\uffff]/g, (ch) =>
    ch === '\\'
      ? '\\\\'
      : ch.charCodeAt(0) <= 0xff
        ? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`
        : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return compactRepeats(escaped);
}

/** The contract's verdict on a query, as the report shows it. */
export function showVerdict(v: Verdict): string {
  return v.label === 'valid' ? 'contract: parameters valid' : `contract: parameters ${v.label} (${v.why})`;
}

/** A request as it would be sent, with the key shown as its state (keys differ between runs). */
export function describeRequest(r: FuzzRequest): string {
  const line = requestLine(r, 0).replace(/^(\S+ \S*?(?:127\.0\.0\.1|localhost)):0([/?#])/i, '$1:PORT$2');
  const verdict = r.target.kind === 'operation' ? `; ${showVerdict(originOf(r).query.verdict)}` : '';
  return `${showLine(line)}   [key: ${r.keyState}${r.keyHeader === 'normal' ? '' : ` (${r.keyHeader} header)`}, ip #${r.ipSlot}, clock +${r.advanceMs} ms${r.extra === 'none' ? '' : `, ${r.extra}`}${verdict}]`;
}

/** Long runs of one character or one percent-encoded character written once, as `x{×250}`. */
export function compactRepeats(s: string): string {
  return s.replace(
    /((?:%[0-9A-Fa-f]{2}){1,4}|[^%])\1{9,}/g,
    (run: string, unit: string) => `${unit}{×${run.length / unit.length}}`,
  );
}

/** The case's requests (the first `upTo`; the others were not sent). */
export function describeCase(c: FuzzCase, upTo = c.requests.length): string {
  return c.requests
    .slice(0, upTo)
    .map((r, i) => `  ${i + 1}. ${describeRequest(r)}`)
    .join('\n');
}

export function originOf(r: FuzzRequest, plain = false): { origin: string; query: RenderedQuery; op?: OperationSpec } {
  const t = r.target;
  if (t.kind === 'unknownPath') {
    const query = renderQuery(undefined, t.query);
    return { origin: `${t.path}${query.raw}`, query };
  }
  const op = operationById.get(t.operationId)!;
  const query = renderQuery(op, t.query);
  const { path, suffix } = writePath(op.path, plain ? 'plain' : t.pathForm, t.salt);
  return { origin: `${path}${query.raw}${plain ? '' : suffix}`, query, op };
}

export function requestLine(r: FuzzRequest, port: number, plain = false): string {
  const { origin } = originOf(r, plain);
  let target = r.target.kind === 'operation' && !plain ? writeTarget(origin, r.target.targetForm, port) : origin;
  if (r.extra === 'rawSpace') target = `${target} x`;
  if (r.extra === 'rawControl') target = target.replace(/^(\/?[^/]*)/, '$1\u0001');
  const method =
    r.extra === 'lowercaseMethod' ? r.method.toLowerCase() : r.extra === 'bogusMethod' ? 'FETCH' : r.method;
  const version = r.extra === 'http10' ? 'HTTP/1.0' : r.extra === 'badVersion' ? 'HTTP/3.0' : 'HTTP/1.1';
  return `${method} ${target} ${version}`;
}
