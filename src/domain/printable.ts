/**
 * Outside text (a feed's or a receiver's answer, a pushed headline, a URL) as it may be written to a
 * terminal or a log line. Every character that can drive a terminal or break a line is shown escaped
 * instead: the C0 controls (tab, CR and LF included), DEL, the C1 controls, the line and paragraph
 * separators and the bidirectional marks, embeddings, overrides and isolates. So no escape sequence
 * reaches the terminal, one record stays one line, and no text can start a line of its own (a forged
 * `fns: …`). The escape is for reading, not for parsing back: a backslash is left as it is.
 *
 * Stored article text is one line of plain text already (domain/text.ts drops the controls), but ids,
 * URLs, answers and rows stored before that rule are not, and bidi controls are kept there: whatever
 * is printed goes through here. Pure.
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

/** `\t`, `\n`, `\r`; `\x1b` up to U+00FF; `\u2028` beyond. */
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

/**
 * A message the program composed, whose line breaks are its own (the outside text in it already went
 * through `printable`): every other character of UNSAFE escaped. The last guard at the output.
 */
export function printableLines(text: string): string {
  return text.replace(UNSAFE_BUT_LF, escapeOne);
}

/**
 * `JSON.stringify(value)` with what JSON leaves raw (DEL, C1, the separators, the bidi controls) written
 * `\uXXXX` too: the same JSON value, and nothing in it that a terminal acts on.
 */
export function printableJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(UNSAFE, jsonEscape);
}
