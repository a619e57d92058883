/**
 * Stored article text, whatever its door, is one line of plain text: controls and U+FFFE/U+FFFF dropped (no terminal
 * escape is stored whole), each whitespace run one space, ends trimmed.
 */

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]/g;

/** `text` as one line of plain text (see the module comment); '' when nothing is left. */
export function plainLine(text: string): string {
  return text.replace(CONTROL, '').replace(/\s+/gu, ' ').trim();
}

/** Whether `text` is longer than `max` characters, counted as JSON Schema's maxLength counts them (code points). */
export function longerThan(text: string, max: number): boolean {
  // A UTF-16 length within `max` is within it in code points too; only a longer text is counted.
  if (text.length <= max) return false;
  let n = 0;
  for (const _ of text) if (++n > max) return true;
  return false;
}
