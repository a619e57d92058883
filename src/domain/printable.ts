/**
 * Outside text (answers, pushed headlines, URLs, stored rows) made safe for a terminal or log line: every character
 * that can drive a terminal or break a line is escaped, so one record stays one line and no text can forge a line
 * (`fns: …`). For reading, not parsing back: a backslash is left as is.
 */

/** What is never written as is: C0, DEL, C1, U+061C, U+200E/F, U+2028/9, U+202A–E, U+2066–9. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_ANY = new RegExp(UNSAFE.source);
const UNSAFE_BUT_LF =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT = new Map([
  ['\t', '\\t'],
  ['\n', '\\n'],
  ['\r', '\\r'],
]);

function hex(c: string, width: number): string {
  return c.charCodeAt(0).toString(16).padStart(width, '0');
}

function escapeOne(c: string): string {
  const short = SHORT.get(c);
  if (short !== undefined) return short;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`;
}

/** JSON's own spelling, `\u001b`, valid inside a JSON string. */
function jsonEscape(c: string): string {
  return `\\u${hex(c, 4)}`;
}

/** True when `text` holds a character `printable` would escape. */
export function hasUnsafe(text: string): boolean {
  return UNSAFE_ANY.test(text);
}

/** Outside text as one line, every character of UNSAFE escaped: `a\x1b[2Jb`, `a\r\nfns: x`. */
export function printable(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

/** A composed message whose line breaks are its own: every other UNSAFE character escaped (the last guard). */
export function printableLines(text: string): string {
  return text.replace(UNSAFE_BUT_LF, escapeOne);
}

/** `JSON.stringify` with what JSON leaves raw (DEL, C1, separators, bidi) as `\uXXXX`: same value, terminal-safe. */
export function printableJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(UNSAFE, jsonEscape);
}
