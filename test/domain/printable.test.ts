/**
 * Outside text on a terminal or in a log line (src/domain/printable.ts): escaped, one line, nothing a terminal acts on.
 */
import { describe, expect, it } from 'vitest';
import { hasUnsafe, printable, printableJson, printableLines } from '../../src/domain/printable.js';

/** Every code point the rule escapes. */
const UNSAFE: number[] = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i), // DEL and C1
  0x061c,
  0x200e,
  0x200f,
  0x2028,
  0x2029,
  0x202a,
  0x202b,
  0x202c,
  0x202d,
  0x202e,
  0x2066,
  0x2067,
  0x2068,
  0x2069,
];
const RAW = new RegExp(`[${UNSAFE.map((c) => `\\u${c.toString(16).padStart(4, '0')}`).join('')}]`, 'u');

describe('printable: outside text as one line with no control character', () => {
  it('escapes terminal escape sequences: ESC, BEL, CSI as C1', () => {
    expect(printable('\x1b]0;pwned\x07title')).toBe('\\x1b]0;pwned\\x07title');
    expect(printable('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(printable('\u009b31m')).toBe('\\x9b31m');
  });

  it('escapes CR, LF and tab, so no text can start a line of its own', () => {
    expect(printable('ok\r\nfns: forged')).toBe('ok\\r\\nfns: forged');
    expect(printable('a\tb')).toBe('a\\tb');
  });

  it('escapes the line and paragraph separators and the bidi controls', () => {
    expect(printable('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
    expect(printable('\u202eevil\u202c \u2066x\u2069 \u200f\u061c')).toBe(
      '\\u202eevil\\u202c \\u2066x\\u2069 \\u200f\\u061c',
    );
  });

  it('leaves every other character as it is: text, accents, emoji, a backslash, a non-breaking space', () => {
    const text = 'Nestlé ↑ 5% — 日本 📈 C:\\path\u00a0x "q" = 1';
    expect(printable(text)).toBe(text);
    expect(hasUnsafe(text)).toBe(false);
  });

  it('leaves none of the escaped code points raw', () => {
    const all = String.fromCodePoint(...UNSAFE);
    const shown = printable(all);
    expect(shown).not.toMatch(RAW);
    expect(hasUnsafe(all)).toBe(true);
    expect(hasUnsafe(shown)).toBe(false);
  });
});

describe('printableLines: a composed message keeps its own line breaks, nothing else', () => {
  it('keeps LF and escapes CR, ESC and the rest', () => {
    expect(printableLines('one\ntwo\x1b[2J\r')).toBe('one\ntwo\\x1b[2J\\r');
  });
});

describe('printableJson: the same JSON value, with nothing a terminal acts on', () => {
  it('escapes what JSON.stringify leaves raw as \\uXXXX, and parses back to the same value', () => {
    const value = { content: 'a\u009b2J\u2028\u202e\x7fb\x1b', n: 1 };
    const text = printableJson(value);
    expect(text).not.toMatch(RAW);
    expect(JSON.parse(text)).toEqual(value);
    expect(text).toBe('{"content":"a\\u009b2J\\u2028\\u202e\\u007fb\\u001b","n":1}');
  });
});
