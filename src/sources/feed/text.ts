/**
 * Feed text to plain text. The tag scanner is our own, linear with no regex backtracking (a parser would build
 * a tree per headline for a few inline tags); it keeps `5 < 6` and an unterminated tag as text.
 */
import { decodeHTML, DecodingMode } from 'entities';
import { plainLine } from '../../domain/text.js';

/** References decoded as HTML does, only when closed by `;` (strict): `R&D` or a bare `&amp` stays as written. */
export function decodeEntities(text: string): string {
  return text.includes('&') ? decodeHTML(text, DecodingMode.Strict) : text;
}

/** Block-level tags: each becomes a space, so the words either side do not run together. */
const BLOCK = new Set(
  (
    'p br div li ul ol tr td th table h1 h2 h3 h4 h5 h6 blockquote pre hr section article header footer figure ' +
    'figcaption dd dt'
  ).split(' '),
);
const SKIP_CONTENT = new Set(['script', 'style', 'noscript', 'template']);

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** End index (exclusive) of the tag starting at `<` at i, honouring quoted attribute values; -1 when unterminated. */
export function tagEnd(s: string, i: number): number {
  let quote = 0;
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (quote) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) {
      quote = c;
    } else if (c === 62) {
      return j + 1;
    }
  }
  return -1;
}

/** Removes markup, keeping text; block-level tags become a space so words do not run together. */
export function stripTags(s: string): string {
  if (!s.includes('<')) return s;
  let out = '';
  let i = 0;
  let lower: string | null = null; // computed once, only when a script/style element needs its end found
  while (i < s.length) {
    const lt = s.indexOf('<', i);
    if (lt === -1) {
      out += s.slice(i);
      break;
    }
    out += s.slice(i, lt);
    if (s.startsWith('<!--', lt)) {
      const end = s.indexOf('-->', lt + 4);
      i = end === -1 ? s.length : end + 3;
      continue;
    }
    if (s.startsWith('<![CDATA[', lt)) {
      const end = s.indexOf(']]>', lt + 9);
      out += end === -1 ? s.slice(lt + 9) : s.slice(lt + 9, end);
      i = end === -1 ? s.length : end + 3;
      continue;
    }
    const next = s.charCodeAt(lt + 1);
    const closing = next === 47; // '/'
    const nameStart = closing ? lt + 2 : lt + 1;
    if (!(isAlpha(s.charCodeAt(nameStart)) || (!closing && (next === 33 || next === 63)))) {
      // A lone '<' (e.g. "5 < 6") is text.
      out += '<';
      i = lt + 1;
      continue;
    }
    const end = tagEnd(s, lt);
    if (end === -1) {
      out += s.slice(lt);
      break;
    }
    let nameEnd = nameStart;
    while (nameEnd < end && /[A-Za-z0-9:-]/.test(s[nameEnd]!)) nameEnd++;
    const name = s.slice(nameStart, nameEnd).toLowerCase().replace(/^.*:/, '');
    i = end;
    if (!closing && SKIP_CONTENT.has(name) && !s.slice(lt, end).endsWith('/>')) {
      lower ??= s.toLowerCase();
      const close = lower.indexOf(`</${name}`, end);
      const closeEnd = close === -1 ? -1 : tagEnd(s, close);
      i = closeEnd === -1 ? s.length : closeEnd;
      out += ' ';
      continue;
    }
    if (BLOCK.has(name)) out += ' ';
  }
  return out;
}

/** Feed text (HTML, entities) to one line of plain text as every article is stored (src/domain/text.ts), or null. */
export function toPlainText(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  const text = plainLine(decodeEntities(stripTags(raw)));
  return text === '' ? null : text;
}
