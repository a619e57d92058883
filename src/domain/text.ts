/**
 * The one rule for the text of a stored article, whichever door it came in by (a polled feed's title or
 * summary once its markup is read, a pushed line, an ingested line): one line of plain text. Control
 * characters (C0 but TAB, LF and CR; DEL; C1) and the non-characters U+FFFE/U+FFFF are dropped, so no
 * terminal escape sequence or bell is ever stored whole; every run of whitespace (TAB, CR, LF, NBSP,
 * U+2028, ...) is one space; the ends are trimmed. Pure.
 */

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]/g;

/** `text` as one line of plain text (see the module comment); '' when nothing is left. */
export function plainLine(text: string): string {
  return text.replace(CONTROL, '').replace(/\s+/gu, ' ').trim();
}
