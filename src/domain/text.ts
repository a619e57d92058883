/**
 * Stored article text, whatever its door, is one line of plain text: controls and U+FFFE/U+FFFF dropped (no terminal
 * escape is stored whole), each whitespace run one space, ends trimmed.
 */

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]/g;

/** `text` as one line of plain text (see the module comment); '' when nothing is left. */
export function plainLine(text: string): string {
  return text.replace(CONTROL, '').replace(/\s+/gu, ' ').trim();
}
