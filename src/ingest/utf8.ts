/** Every ingestion path refuses bytes that are not UTF-8 and lone surrogates, naming the line; never U+FFFD. */

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as UTF-8 text, or null when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}

/** The offset of the first byte that does not start or continue a valid UTF-8 sequence, or -1 (linear, no copy). */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let len: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) len = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      len = 3;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f; // UTF-16 surrogates are not UTF-8
    } else if (b >= 0xf0 && b <= 0xf4) {
      len = 4;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + len > n) return i;
    const second = bytes[i + 1]!;
    if (second < lo || second > hi) return i;
    for (let k = 2; k < len; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += len;
  }
  return -1;
}

/** 1-based line and column (in bytes) of a byte offset. */
export function lineOfOffset(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < offset; i = bytes.indexOf(0x0a, i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** What an ingestion path says of a line that is not UTF-8. */
export function notUtf8Message(bytes: Uint8Array, offset = invalidUtf8Offset(bytes)): string {
  const b = bytes[offset];
  return `not valid UTF-8 (byte 0x${(b ?? 0).toString(16).padStart(2, '0')} at byte ${offset + 1} of the line); send UTF-8 text`;
}

// With the u flag, a surrogate pair is one code point: only a lone (unpaired) surrogate matches.
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Path (`tickers[0].ticker`) of the first string or key holding a lone surrogate (JSON allows `"\ud800"`), or null. */
export function loneSurrogatePath(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path || 'the value' : null;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = loneSurrogatePath(value[i], `${path}[${i}]`);
      if (p !== null) return p;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    if (LONE_SURROGATE.test(k)) return `a field name${path ? ` in ${path}` : ''}`;
    const p = loneSurrogatePath(v, path ? `${path}.${k}` : k);
    if (p !== null) return p;
  }
  return null;
}

/** The refusal of a parsed line holding a lone surrogate, or null. */
export function loneSurrogateError(value: unknown): string | null {
  const p = loneSurrogatePath(value);
  return p === null
    ? null
    : `${p} holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape), which is not text; send valid Unicode`;
}
