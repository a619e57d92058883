/**
 * The standard rate-limit fields of draft-ietf-httpapi-ratelimit-headers (-10/-11), read as the draft
 * defines them: `RateLimit-Policy` and `RateLimit` are Structured Field Lists (RFC 9651) of Items whose
 * value names a policy, with parameters (`q`, `w`, `qu` on a policy; `r`, `t` on a service limit).
 *
 *     RateLimit-Policy: "max";q=60;w=60
 *     RateLimit: "max";r=59;t=42
 *
 * `parseList` is the RFC 9651 §4.2.1 List parser (Items and Inner Lists, every bare item type, with
 * parameters); `parseRateLimitPolicy` and `parseRateLimit` apply the draft's rules on top and return
 * `undefined` for a malformed field, which the draft says a client must ignore.
 */

export type BareItem = number | string | boolean | Uint8Array | SfToken | SfDate | SfDisplayString;
export type Parameters = Map<string, BareItem>;
export interface SfItem {
  value: BareItem;
  params: Parameters;
}
export interface SfInnerList {
  items: SfItem[];
  params: Parameters;
}

/** A Token (kept apart from a String: `"max"` and `max` are different bare items). */
export class SfToken {
  constructor(readonly name: string) {}
}
/** A Date (RFC 9651 §3.3.7): seconds since the epoch. */
export class SfDate {
  constructor(readonly seconds: number) {}
}
/** A Display String (RFC 9651 §3.3.8). */
export class SfDisplayString {
  constructor(readonly text: string) {}
}

class Malformed extends Error {}

const DIGIT = /[0-9]/;
const ALPHA = /[A-Za-z]/;
const LCALPHA = /[a-z]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;
// tchar (RFC 9110 §5.6.2) plus ":" and "/".
const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;
const BASE64_CHAR = /[A-Za-z0-9+/=]/;

class Reader {
  i = 0;
  constructor(readonly s: string) {}
  get done(): boolean {
    return this.i >= this.s.length;
  }
  peek(): string {
    return this.s[this.i] ?? '';
  }
  take(): string {
    return this.s[this.i++] ?? '';
  }
  skipSp(): void {
    while (this.peek() === ' ') this.i++;
  }
  skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
  }
}

/**
 * Parses a List field value (RFC 9651 §4.2.1, several field lines already joined with `, ` as `fetch`
 * does). Throws on malformed input.
 */
export function parseList(input: string): (SfItem | SfInnerList)[] {
  const r = new Reader(input);
  r.skipSp();
  const members: (SfItem | SfInnerList)[] = [];
  while (!r.done) {
    members.push(r.peek() === '(' ? innerList(r) : item(r));
    r.skipOws();
    if (r.done) break;
    if (r.take() !== ',') throw new Malformed('expected a comma between list members');
    r.skipOws();
    if (r.done) throw new Malformed('a trailing comma');
  }
  // Trailing spaces are not part of a field value (they are stripped before parsing).
  return members;
}

function innerList(r: Reader): SfInnerList {
  r.take(); // "("
  const items: SfItem[] = [];
  for (;;) {
    r.skipSp();
    if (r.peek() === ')') {
      r.take();
      return { items, params: parameters(r) };
    }
    items.push(item(r));
    const c = r.peek();
    if (c !== ' ' && c !== ')') throw new Malformed('expected a space or ")" in an inner list');
  }
}

function item(r: Reader): SfItem {
  return { value: bareItem(r), params: parameters(r) };
}

function parameters(r: Reader): Parameters {
  const params: Parameters = new Map();
  while (r.peek() === ';') {
    r.take();
    r.skipSp();
    const k = key(r);
    let value: BareItem = true;
    if (r.peek() === '=') {
      r.take();
      value = bareItem(r);
    }
    params.set(k, value); // a repeated key: the last one wins (RFC 9651 §4.2.3.2)
  }
  return params;
}

function key(r: Reader): string {
  const first = r.peek();
  if (!LCALPHA.test(first) && first !== '*') throw new Malformed('a key starts with a lowercase letter or "*"');
  let k = '';
  while (!r.done && KEY_CHAR.test(r.peek())) k += r.take();
  return k;
}

function bareItem(r: Reader): BareItem {
  const c = r.peek();
  if (c === '-' || DIGIT.test(c)) return number(r);
  if (c === '"') return string(r);
  if (c === '*' || ALPHA.test(c)) return token(r);
  if (c === ':') return byteSequence(r);
  if (c === '?') return boolean(r);
  if (c === '@') {
    r.take();
    const n = number(r);
    if (!Number.isInteger(n)) throw new Malformed('a date is an integer');
    return new SfDate(n);
  }
  if (c === '%') return displayString(r);
  throw new Malformed(`no bare item starts with ${JSON.stringify(c)}`);
}

function number(r: Reader): number {
  let sign = 1;
  if (r.peek() === '-') {
    r.take();
    sign = -1;
  }
  if (!DIGIT.test(r.peek())) throw new Malformed('a number needs a digit');
  let text = '';
  let decimal = false;
  while (!r.done) {
    const c = r.peek();
    if (DIGIT.test(c)) text += r.take();
    else if (c === '.' && !decimal) {
      if (text.length > 12) throw new Malformed('a decimal has at most 12 integer digits');
      decimal = true;
      text += r.take();
    } else break;
    if (!decimal && text.length > 15) throw new Malformed('an integer has at most 15 digits');
    if (decimal && text.length > 16) throw new Malformed('a decimal is too long');
  }
  if (decimal) {
    const fraction = text.length - text.indexOf('.') - 1;
    if (fraction < 1 || fraction > 3) throw new Malformed('a decimal has 1 to 3 fraction digits');
    return sign * Number(text);
  }
  return sign * Number(text);
}

function string(r: Reader): string {
  r.take(); // '"'
  let out = '';
  for (;;) {
    if (r.done) throw new Malformed('an unterminated string');
    const c = r.take();
    if (c === '\\') {
      const next = r.take();
      if (next !== '"' && next !== '\\') throw new Malformed('a string escapes only `"` and `\\`');
      out += next;
    } else if (c === '"') return out;
    else if (c < ' ' || c > '~') throw new Malformed('a string holds printable ASCII only');
    else out += c;
  }
}

function token(r: Reader): SfToken {
  let t = r.take();
  while (!r.done && TOKEN_CHAR.test(r.peek())) t += r.take();
  return new SfToken(t);
}

function byteSequence(r: Reader): Uint8Array {
  r.take(); // ":"
  let b64 = '';
  while (r.peek() !== ':') {
    if (r.done || !BASE64_CHAR.test(r.peek())) throw new Malformed('a byte sequence is base64 between colons');
    b64 += r.take();
  }
  r.take();
  return Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
}

function boolean(r: Reader): boolean {
  r.take(); // "?"
  const c = r.take();
  if (c === '1') return true;
  if (c === '0') return false;
  throw new Malformed('a boolean is ?0 or ?1');
}

function displayString(r: Reader): SfDisplayString {
  r.take(); // "%"
  if (r.take() !== '"') throw new Malformed('a display string starts with %"');
  const bytes: number[] = [];
  for (;;) {
    if (r.done) throw new Malformed('an unterminated display string');
    const c = r.take();
    if (c === '"') break;
    if (c < ' ' || c > '~') throw new Malformed('a display string holds printable ASCII only');
    if (c === '%') {
      const hex = r.take() + r.take();
      if (!/^[0-9a-f]{2}$/.test(hex)) throw new Malformed('a display string escape is % and two lowercase hex digits');
      bytes.push(parseInt(hex, 16));
    } else bytes.push(c.charCodeAt(0));
  }
  try {
    return new SfDisplayString(new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes)));
  } catch {
    throw new Malformed('a display string is UTF-8');
  }
}

/** A quota policy of `RateLimit-Policy`. */
export interface QuotaPolicy {
  policy: string;
  /** `q`: the quota, in quota units. */
  quota: number;
  /** `w`: the time window in seconds, when given. */
  windowSeconds?: number;
  /** `qu`: the quota unit, when given (the draft's default is `requests`). */
  unit?: string;
}

/** A service limit of `RateLimit`. */
export interface ServiceLimit {
  policy: string;
  /** `r`: the quota units left. */
  remaining: number;
  /** `t`: the seconds until more quota is made available, when given. */
  resetSeconds?: number;
}

const isCount = (v: BareItem | undefined): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * The list's items with their policy names. The draft makes the value a String; a Token is accepted too
 * (the working group discussed allowing it). An inner list or another value makes the field malformed.
 */
function policyItems(value: string | null): { policy: string; params: Parameters }[] | undefined {
  if (value === null) return undefined;
  let members: (SfItem | SfInnerList)[];
  try {
    members = parseList(value.trim());
  } catch (err) {
    if (err instanceof Malformed) return undefined;
    throw err;
  }
  if (members.length === 0) return undefined;
  const out: { policy: string; params: Parameters }[] = [];
  for (const m of members) {
    if (!('value' in m)) return undefined;
    const policy = typeof m.value === 'string' ? m.value : m.value instanceof SfToken ? m.value.name : undefined;
    if (policy === undefined) return undefined;
    out.push({ policy, params: m.params });
  }
  return out;
}

/** Reads `RateLimit-Policy`; `undefined` when absent or malformed. Unknown parameters are ignored. */
export function parseRateLimitPolicy(value: string | null): QuotaPolicy[] | undefined {
  const items = policyItems(value);
  if (!items) return undefined;
  const out: QuotaPolicy[] = [];
  for (const { policy, params } of items) {
    const q = params.get('q');
    const w = params.get('w');
    const qu = params.get('qu');
    if (!isCount(q)) return undefined;
    if (w !== undefined && !(isCount(w) && w > 0)) return undefined;
    if (qu !== undefined && typeof qu !== 'string') return undefined;
    out.push({
      policy,
      quota: q,
      ...(w !== undefined ? { windowSeconds: w } : {}),
      ...(qu !== undefined ? { unit: qu } : {}),
    });
  }
  return out;
}

/** Reads `RateLimit`; `undefined` when absent or malformed. Unknown parameters are ignored. */
export function parseRateLimit(value: string | null): ServiceLimit[] | undefined {
  const items = policyItems(value);
  if (!items) return undefined;
  const out: ServiceLimit[] = [];
  for (const { policy, params } of items) {
    const r = params.get('r');
    const t = params.get('t');
    if (!isCount(r)) return undefined;
    if (t !== undefined && !isCount(t)) return undefined;
    out.push({ policy, remaining: r, ...(t !== undefined ? { resetSeconds: t } : {}) });
  }
  return out;
}

/**
 * Seconds to wait before quota is back, from `RateLimit`: the longest `t` among the policies with
 * nothing left (`r=0`); `undefined` when none is exhausted or none says when.
 */
export function rateLimitWaitSeconds(limits: readonly ServiceLimit[] | undefined): number | undefined {
  const waits = (limits ?? [])
    .filter((l) => l.remaining === 0 && l.resetSeconds !== undefined)
    .map((l) => l.resetSeconds!);
  return waits.length ? Math.max(...waits) : undefined;
}
